"""Time `evalkit score` on a large run folder (default 5,000 attempts; target under 60 s).

The folder is synthetic but made of real parts: the attempts of one real `evalkit run` of the
oracle and null on the demo suite (made here, which needs Docker once, or given with --seed-run)
are replicated under more model names and samples, their trajectories hard-linked. So that no
cache can score a copy by remembering the original, every replicated non-empty patch gains a new
file unique to its attempt, in turn clean, with lint findings, with a debug print, or with a
syntax error. Scoring itself needs no Docker: the timed runs see DOCKER_HOST pointing nowhere.

Prints the median wall time of `evalkit score RUN_DIR` (each a new process), the ms per attempt,
and the 15 functions with the most cumulative time in one in-process `score_run` under cProfile.

    python benchmarks/score_run.py [--attempts 5000] [--models 5] [--repeats 3] [--seed-run DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import json
import math
import os
import pstats
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EVALKIT = str(Path(sys.executable).parent / "evalkit")
DEMO = REPO / "tasks" / "demo"
NO_DOCKER = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
VARIANTS = (  # the new file's body, by sample: clean, lint findings (F401, F841, B006, E722), debug print, syntax error
    "VALUE = {n}\n",
    "import os\n\n\ndef f{n}(items=[]):\n    unused = {n}\n    try:\n        return items\n    except:\n        pass\n",
    'print("debug {n}")\n',
    "def broken_{n}(:\n    pass\n",
)


def seed_run(work: Path) -> Path:
    """One real run of the oracle and null on the demo suite (needs Docker)."""
    out = work / "seed"
    done = subprocess.run(
        [
            EVALKIT,
            "run",
            "--suite",
            str(DEMO),
            "--model",
            "oracle",
            "--model",
            "null",
            "--run-id",
            "seed",
            "--out",
            str(out),
        ],  # fmt: skip
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"the seed run failed (Docker needed, or pass --seed-run): {done.stderr[-2000:]}")
    return out / "seed"


def with_new_file(patch: str, path: str, body: str) -> str:
    """`patch` plus a hunk creating `path` with `body`."""
    lines = body.splitlines(keepends=True)
    added = "".join(f"+{line}" for line in lines)
    hunk = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    return (patch if patch.endswith("\n") else patch + "\n") + hunk + f"@@ -0,0 +1,{len(lines)} @@\n" + added


def link(source: Path, dest: Path) -> None:
    try:
        os.link(source, dest)
    except OSError:  # another file system
        shutil.copyfile(source, dest)


def build_run(seed: Path, root: Path, attempts: int, models: int) -> Path:
    """A run folder of `attempts` attempts replicated from the seed run's."""
    records = [json.loads(line) for line in (seed / "results.jsonl").read_text().splitlines() if line.strip()]
    samples = math.ceil(attempts / (len(records) * models))
    run = root / "bench"
    (run / "trajectories").mkdir(parents=True)
    manifest = json.loads((seed / "run.json").read_text())
    manifest["run_id"] = "bench"
    manifest["suite_path"] = str(DEMO)
    manifest["models"] = {f"{name}-{m}": spec for name, spec in manifest["models"].items() for m in range(models)}
    manifest["samples"] = samples
    (run / "run.json").write_text(json.dumps(manifest))
    rows = []
    for sample in range(samples):
        for m in range(models):
            for number, record in enumerate(records):
                if len(rows) == attempts:
                    break
                row = {**record, "run_id": "bench", "model": f"{record['model']}-{m}", "sample": sample}
                name = f"{row['task_id']}__{row['model']}__{sample}"
                if row["model_patch"].strip() and (sample or m):  # the first copy keeps the real patch
                    package = row["task_id"].split("-")[0]
                    unique = f"{number}_{m}_{sample}"
                    body = VARIANTS[(sample + m) % len(VARIANTS)].format(n=unique)
                    row["model_patch"] = with_new_file(row["model_patch"], f"{package}/bench_{unique}.py", body)
                row["trajectory"] = f"trajectories/{name}.jsonl"
                link(seed / record["trajectory"], run / row["trajectory"])
                rows.append(json.dumps(row) + "\n")
    (run / "results.jsonl").write_text("".join(rows))
    return run


def time_score(run: Path, repeats: int) -> list[float]:
    """Wall seconds of `evalkit score RUN` in a new process, each time; Docker out of reach."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([EVALKIT, "score", str(run)], capture_output=True, text=True, env=NO_DOCKER)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            sys.exit(f"evalkit score failed: {done.stderr[-2000:]}")
    return times


def profile_score(run: Path) -> tuple[float, pstats.Stats]:
    from evalkit.runs.store import RunStore
    from evalkit.scoring.attempt_scores import ScoringSettings
    from evalkit.scoring.run_scores import run_tasks, score_run

    store = RunStore(run)
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    score_run(store, run_tasks(store), ScoringSettings())
    profiler.disable()
    return time.perf_counter() - started, pstats.Stats(profiler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--attempts", type=int, default=5000)
    parser.add_argument("--models", type=int, default=5, help="copies of each seed model")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed-run", type=Path, help="a run folder to replicate (default: run one, needs Docker)")
    parser.add_argument("--no-profile", action="store_true")
    parser.add_argument("--keep", type=Path, help="build the run folder in this new folder and keep it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-score-") as tmp:
        seed = args.seed_run or seed_run(Path(tmp))
        run = build_run(seed, args.keep or Path(tmp), args.attempts, args.models)
        attempts = len((run / "results.jsonl").read_text().splitlines())
        times = time_score(run, args.repeats)
        first = (run / "scores.jsonl").read_bytes()
        median = statistics.median(times)
        print(f"evalkit score on {attempts} attempts ({args.models * 2} models, seed {seed}):")
        print(f"  wall {median:.1f} s median of {args.repeats} ({', '.join(f'{t:.1f}' for t in times)}), "
              f"{median / attempts * 1000:.2f} ms per attempt; target < 60 s")  # fmt: skip
        print(f"  load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores (other work shares the machine)")
        if not args.no_profile:
            seconds, stats = profile_score(run)
            same = (run / "scores.jsonl").read_bytes() == first
            print(f"in-process score_run under cProfile: {seconds:.1f} s; scores.jsonl identical: {same}")
            stats.sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
