"""Start-up time of the `evalkit` command: `evalkit --help` (and `evalkit -h`) run as a user runs
them, each in a new process, next to `python -c pass` in the same interpreter as the baseline.
Prints the medians (wall time, and the process's CPU time, which other load on a shared machine
disturbs less) and their ratio; the target for `--help` is under 0.5 s.

    python benchmarks/cli_startup.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

EVALKIT = str(Path(sys.executable).parent / "evalkit")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_seconds(command: list[str], repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of `command`, each run in a new process."""
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache outside the measurement
    wall, cpu = [], []
    for _ in range(repeats):
        started, cpu_before = time.perf_counter(), _children_cpu()
        subprocess.run(command, capture_output=True, check=True)
        wall.append(time.perf_counter() - started)
        cpu.append(_children_cpu() - cpu_before)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    baseline = median_seconds([sys.executable, "-c", "pass"], args.repeats)
    rows = [("python -c pass", baseline)]
    for label, command in (
        ("evalkit --help", ["--help"]),
        ("evalkit -h", ["-h"]),
        ("evalkit run --help", ["run", "--help"]),
    ):
        rows.append((label, median_seconds([EVALKIT, *command], args.repeats)))
    print(f"{'command':22} {'wall':>9} {'x baseline':>11} {'cpu':>9} {'x baseline':>11}")
    (base_wall, base_cpu) = baseline
    for label, (wall, cpu) in rows:
        print(f"{label:22} {wall * 1000:6.0f} ms {wall / base_wall:11.1f} {cpu * 1000:6.0f} ms {cpu / base_cpu:11.1f}")
    print(f"(medians of {args.repeats} runs, each a new process; target: evalkit --help under 500 ms)")


if __name__ == "__main__":
    main()
