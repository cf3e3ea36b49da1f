"""Real SWE-bench Verified instances evaluated offline: the 25 sphinx rows of the shared mini set,
through the CLI a user runs. Unpacks the shared sphinx repository, imports the CSV with
`--repo-dir`, validates every sphinx task one (repository, version) at a time (so the environment
image's build, logged by the backend, is timed per version), evaluates the gold patches as
SWE-bench predictions (all 25 are resolved in SWE-bench Verified, by definition), and validates
the django rows, whose repository is not here, to show the line each gets.

    python benchmarks/swebench_sphinx.py [--runs 1] [--concurrency 1] [--keep DIR] [--data DIR]

--keep DIR keeps the work (suite, JSON rows, evalkit.log) and resumes an interrupted benchmark.

Prints per version the build seconds, per instance the validate seconds and verdict, the count
valid, the gold evaluation's agreement with SWE-bench, and the total wall time.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

EVALKIT = str(Path(sys.executable).parent / "evalkit")
DATA = Path("/work/shared/data/swebench")  # the shared data folder of this project's machine (its README: provenance)
CSV_NAME = "swe_bench_verified_mini50.csv"
SPHINX_TAR_NAME = "repos/sphinx-doc__sphinx.git.tar.gz"
SPHINX = "sphinx-doc/sphinx"
_BUILT = re.compile(r"environment of (\S+) (\S+): (built|failed) in (\d+) s")


def evalkit(*args: str, log: Path) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run the CLI as a user does; its output goes to `log` (appended) too. Returns it and its wall time."""
    started = time.perf_counter()
    done = subprocess.run([EVALKIT, *args], capture_output=True, text=True)
    wall = time.perf_counter() - started
    with log.open("a") as out:
        out.write(f"$ evalkit {' '.join(args)}\n(exit {done.returncode}, {wall:.1f} s)\n{done.stdout}{done.stderr}\n")
    return done, wall


def load_rows(csv_path: Path) -> list[dict[str, str]]:
    with csv_path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def validate(suite: Path, ids: list[str], work: Path, name: str, args: argparse.Namespace, log: Path):
    """Validate `ids` in one CLI call: the JSON rows, the environment builds logged, the wall time.
    Kept in `work` (done-NAME.json), so a rerun with the same --keep goes on where one stopped."""
    done_file = work / f"done-{name}.json"
    if done_file.is_file():
        kept = json.loads(done_file.read_text())
        return kept["rows"], [tuple(b) for b in kept["builds"]], kept["wall"]
    rows_file = work / f"validate-{name}.json"
    task_args = [arg for task_id in ids for arg in ("--task", task_id)]
    done, wall = evalkit(
        "tasks",
        "validate",
        str(suite),
        *task_args,
        "--runs",
        str(args.runs),
        "--concurrency",
        str(args.concurrency),
        "--json",
        str(rows_file),
        log=log,
    )
    rows = json.loads(rows_file.read_text()) if rows_file.is_file() else []
    if not rows:
        print(f"validate {name}: no rows (exit {done.returncode}): {done.stderr.strip()[-300:]}")
    builds = [(m[1], m[2], m[3], int(m[4])) for m in _BUILT.finditer(done.stdout + done.stderr)]
    if rows:
        done_file.write_text(json.dumps({"rows": rows, "builds": builds, "wall": wall}))
    return rows, builds, wall


def validate_version(suite: Path, ids: list[str], work: Path, version: str, args: argparse.Namespace, log: Path):
    """Validate one version's tasks one CLI call each (the first call builds the environment), so
    an interrupted benchmark loses at most one task's work."""
    if (work / f"done-sphinx-{version}.json").is_file():
        return validate(suite, ids, work, f"sphinx-{version}", args, log)
    rows, builds, wall = [], [], 0.0
    for task_id in ids:
        found, built, took = validate(suite, [task_id], work, task_id, args, log)
        rows, builds, wall = rows + found, builds + built, wall + took
    return rows, builds, wall


def gold_predictions(rows: list[dict[str, str]], path: Path) -> Path:
    preds = [{"instance_id": r["instance_id"], "model_name_or_path": "gold", "model_patch": r["patch"]} for r in rows]
    path.write_text(json.dumps(preds, indent=1) + "\n")
    return path


def evaluate_gold(sphinx: list[dict[str, str]], suite: Path, work: Path, args: argparse.Namespace, log: Path):
    """`evalkit evaluate` of the rows' gold patches as predictions: its summary report and wall time
    (kept in `work`, as the validations are)."""
    report_file = work / "evaluations" / "gold" / "gold.report.json"
    wall_file = work / "evaluate-wall.txt"
    if report_file.is_file() and wall_file.is_file():
        return json.loads(report_file.read_text()), float(wall_file.read_text())
    preds = gold_predictions(sphinx, work / "gold.json")
    done, wall = evalkit(
        "evaluate",
        str(preds),
        "--suite",
        str(suite),
        "--run-id",
        "gold",
        "--out",
        str(work / "evaluations"),
        "--concurrency",
        str(args.concurrency),
        log=log,
    )
    if not report_file.is_file():
        print(f"evaluate: no report (exit {done.returncode}): {done.stderr.strip()[-300:]}")
        return {}, wall
    wall_file.write_text(f"{wall:.1f}")
    return json.loads(report_file.read_text()), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1, help="reference-patch runs per task (validate --runs)")
    parser.add_argument("--concurrency", type=int, default=1, help="tasks validated/evaluated at once")
    parser.add_argument("--data", type=Path, default=DATA, help=f"folder of {CSV_NAME} and {SPHINX_TAR_NAME}")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    started = time.perf_counter()
    csv_path, sphinx_tar = args.data / CSV_NAME, args.data / SPHINX_TAR_NAME
    rows = load_rows(csv_path)
    sphinx = [r for r in rows if r["repo"] == SPHINX]
    others = [r for r in rows if r["repo"] != SPHINX]
    with tempfile.TemporaryDirectory(prefix="swebench-sphinx-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        log = work / "evalkit.log"
        repos, suite = work / "repos", work / "suite"
        repos.mkdir(exist_ok=True)
        if not suite.is_dir():
            with tarfile.open(sphinx_tar) as tar:
                tar.extractall(repos, filter="data")
            args_ = ("tasks", "import", "swebench", str(csv_path), "--out", str(suite), "--repo-dir", str(repos))
            done, _ = evalkit(*args_, log=log)
            if done.returncode != 0:
                sys.exit(f"import failed: {done.stderr.strip()}")

        by_version: dict[str, list[str]] = defaultdict(list)
        for row in sphinx:
            by_version[row["version"]].append(row["instance_id"])
        health: dict[str, dict] = {}
        version_rows = []
        for version in sorted(by_version, key=version_key):
            found, builds, wall = validate_version(suite, by_version[version], work, version, args, log)
            health.update({h["task_id"]: h for h in found})
            build = next((b for b in builds if b[1] == version), None)
            version_rows.append((version, len(by_version[version]), build, wall))
            state = f"{build[2]} in {build[3]} s" if build else "cached"
            print(f"sphinx {version}: env {state}; validated {len(found)} in {wall:.0f} s", flush=True)

        report, eval_wall = evaluate_gold(sphinx, suite, work, args, log)
        resolved = set(report.get("resolved_ids", []))

        django, _, _ = validate(suite, [r["instance_id"] for r in others], work, "others", args, log)
        if args.keep is None:
            subprocess.run(["chmod", "-R", "u+w", str(work)], check=False)

    total = time.perf_counter() - started
    print(f"\n{'version':8} {'tasks':>5} {'env build':>10} {'validate wall':>14}")
    for version, count, build, wall in version_rows:
        state = f"{build[3]} s" if build and build[2] == "built" else (f"FAILED {build[3]} s" if build else "cached")
        print(f"{version:8} {count:5} {state:>10} {wall:12.0f} s")

    print(f"\n{'instance':28} {'ver':>4} {'validate':>9} {'gold eval':>10}  verdict")
    first_of_built = {by_version[v][0] for v, _, b, _ in version_rows if b and b[2] == "built"}
    plain_times = []
    for row in sorted(sphinx, key=lambda r: (version_key(r["version"]), r["instance_id"])):
        iid = row["instance_id"]
        h = health.get(iid)
        if h is None:
            print(f"{iid:28} {row['version']:>4} {'-':>9} {'-':>10}  no validation row")
            continue
        note = "*" if iid in first_of_built else " "
        if iid not in first_of_built:
            plain_times.append(h["duration_s"])
        verdict = "valid" if h["valid"] else "invalid: " + "; ".join(h["problems"])[:150]
        gold = "resolved" if iid in resolved else ("-" if not report else "UNRESOLVED")
        print(f"{iid:28} {row['version']:>4} {h['duration_s']:8.1f}{note} {gold:>10}  {verdict}")
    valid = sum(1 for h in health.values() if h["valid"])
    print("(* includes its version's environment build)")
    median = f"{statistics.median(plain_times):.1f} s" if plain_times else "-"
    print(f"\nvalid: {valid} of {len(sphinx)} sphinx tasks (the rows whose repository is here)")
    print(f"median validate time per instance (--runs {args.runs}, image cached): {median}")
    agree = len(resolved & {r["instance_id"] for r in sphinx})
    print(
        f"gold evaluate: {agree} of {len(sphinx)} resolved; SWE-bench Verified: {len(sphinx)} of {len(sphinx)}"
        f" (agreement {agree}/{len(sphinx)}; evaluate wall {eval_wall:.0f} s)"
    )
    print(f"\n{len(django)} rows of other repositories (not available offline):")
    for h in django:
        print(f"  {h['task_id']}: {'valid' if h['valid'] else '; '.join(h['problems'])}")
    print(f"\ntotal wall time {total:.0f} s (--runs {args.runs}, --concurrency {args.concurrency})")


if __name__ == "__main__":
    main()
