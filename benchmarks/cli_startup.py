"""Start-up time of the `evalkit` command: `evalkit --help` (and `evalkit -h`) run as a user runs
them, each in a new process, next to `python -c pass` in the same interpreter as the baseline.
Prints the medians and their ratio; the target for `--help` is under 0.5 s.

    python benchmarks/cli_startup.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

EVALKIT = str(Path(sys.executable).parent / "evalkit")


def median_seconds(command: list[str], repeats: int) -> float:
    subprocess.run(command, capture_output=True, check=True)  # warm the file cache outside the measurement
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


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
    print(f"{'command':22} {'median':>10} {'x baseline':>11}")
    for label, seconds in rows:
        print(f"{label:22} {seconds * 1000:7.0f} ms {seconds / baseline:11.1f}")
    print(f"(medians of {args.repeats} runs, each a new process; target: evalkit --help under 500 ms)")


if __name__ == "__main__":
    main()
