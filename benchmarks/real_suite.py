"""The shipped suite of real tasks end to end with the built-in oracle: what a user waits for.

1. The first environment build: each recipe image of the suite built with no layer cache (its Python
   base kept), timed per recipe and in all; `--keep-images` skips this part and times nothing.
2. `evalkit run --model oracle` over the whole suite with its images built, at `--concurrency`:
   the run's wall time beside the floor, the sum of the attempts' hidden-test runs divided by the
   concurrency (what the tests alone cost on this machine); target ratio <= 1.3. Nothing is built
   during the run: its wall time is the suite's steady cost.

The median of `--repeats` runs; everything goes to a temporary folder and the run's
containers are removed by evalkit itself.

    python benchmarks/real_suite.py [--suite tasks/python-libs] [--concurrency 2] [--repeats 1] [--keep-images]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalkit.sandbox.docker.backend import docker_client
from evalkit.sandbox.docker.images import build_image, recipe_python_base, resolve_image, with_host_files
from evalkit.sandbox.python_bases import DEFAULT_BASE_IMAGE
from evalkit.tasks import load_suite

ROOT = Path(__file__).resolve().parents[1]
EVALKIT = str(Path(sys.executable).with_name("evalkit"))


def _recipes(suite: Path) -> list[Path]:
    return sorted({Path(t.image) for t in load_suite(suite).tasks if Path(t.image).is_absolute()})


def first_builds(suite: Path) -> list[tuple[str, float]]:
    """Each recipe built again with no layer cache, as on a machine that never built it (its Python
    base kept), under a throwaway tag removed after; (recipe, seconds). Removing the real image would
    not do: the engine keeps it while an agent layer is built on it, and a rebuild then takes 0 s."""
    client = docker_client()
    timed = []
    for recipe in _recipes(suite):
        python_base = recipe_python_base(recipe)
        base = python_base.image if python_base else DEFAULT_BASE_IMAGE
        resolve_image(client, str(recipe))  # the base built if missing: not part of the figure
        tag = f"evalkit/bench-first-build:{recipe.name}"
        with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as tmp:
            context = with_host_files(recipe, Path(tmp) / recipe.name)
            started = time.perf_counter()
            build_image(client, context, tag, {"BASE_IMAGE": base}, f"recipe {recipe}", nocache=True)
            timed.append((recipe.name, time.perf_counter() - started))
        client.images.remove(tag, force=True)
    return timed


def oracle_run(suite: Path, concurrency: int, out: Path, run_id: str) -> tuple[float, float, int, int]:
    """(wall s, sum of hidden-test seconds, resolved, attempts) of one oracle run."""
    started = time.perf_counter()
    command = [EVALKIT, "run", "--suite", str(suite), "--model", "oracle", "--concurrency", str(concurrency),
               "--run-id", run_id, "--out", str(out), "--no-preflight"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 3):
        sys.exit(f"evalkit run failed ({done.returncode}): {done.stderr.strip()[-400:]}")
    rows = [json.loads(line) for line in (out / run_id / "results.jsonl").read_text().splitlines() if line]
    tests = sum(float(r.get("test_time_s") or 0) for r in rows)
    return wall, tests, sum(bool(r.get("resolved")) for r in rows), len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=ROOT / "tasks" / "python-libs")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--keep-images", action="store_true")
    args = parser.parse_args()
    tasks = len(load_suite(args.suite).tasks)
    print(f"suite {args.suite} ({tasks} tasks, {len(_recipes(args.suite))} recipes), concurrency {args.concurrency}")
    if not args.keep_images:
        builds = first_builds(args.suite)
        for name, seconds in builds:
            print(f"  first build {name}: {seconds:.0f} s")
        print(f"first environment build, all recipes: {sum(s for _, s in builds):.0f} s")
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-suite-") as tmp:
        runs = [oracle_run(args.suite, args.concurrency, Path(tmp), f"oracle-{n}") for n in range(args.repeats)]
    wall = statistics.median(r[0] for r in runs)
    floor = statistics.median(r[1] for r in runs) / args.concurrency
    resolved, attempts = runs[-1][2], runs[-1][3]
    print(f"oracle run: {wall:.0f} s wall (median of {len(runs)}), resolved {resolved}/{attempts}")
    print(
        f"hidden-test floor: {floor:.0f} s (sum of test runs / concurrency); ratio {wall / floor:.2f} (target <= 1.3)"
    )


if __name__ == "__main__":
    main()
