"""Candidates validated per minute by `evalkit gather` at --concurrency 1 and 2 on the same
repository, and their ratio (issue 16's target: ≥ 1.7× on 2 cores).

The repository is built here with real git: a small package and N commits that each add a module
and its tests (every one a candidate that validates, `--runs` times before and after, in the stock
`python` image). Each gather is a new process into a new --out; the rate is the one its
gather-report.json records for the validation phase (screening excluded). Runs at concurrency 1
and 2 alternate so drift spreads over both; medians over --repeats.

    python benchmarks/gather_throughput.py [--candidates 8] [--runs 2] [--repeats 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

EVALKIT = str(Path(sys.executable).parent / "evalkit")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
    "PATH": "/usr/bin:/bin:/usr/local/bin",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env={**GIT_ENV, "HOME": str(repo)})


def commit(repo: Path, files: dict[str, str], message: str) -> None:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "--all")
    git(repo, "-c", "commit.gpgsign=false", "commit", "--quiet", "-m", message)


def build_repo(repo: Path, candidates: int) -> Path:
    """A package, then `candidates` commits each adding a module of small functions and its tests."""
    repo.mkdir(parents=True)
    git(repo, "init", "--quiet", "--initial-branch=main")
    commit(repo, {"calc/__init__.py": "", "tests/test_base.py": "def test_base():\n    assert True\n"}, "Start")
    for n in range(candidates):
        module = "".join(f"def f{i}(x):\n    return x * {i} + {n}\n\n\n" for i in range(12))
        test = "def test_f{i}():\n    from calc.m{n} import f{i}\n\n    assert f{i}(2) == {value}\n\n\n"
        tests = "".join(test.format(i=i, n=n, value=2 * i + n) for i in range(6))
        commit(repo, {f"calc/m{n}.py": module, f"tests/test_m{n}.py": tests}, f"Add the m{n} helpers\n\nFor sums.\n")
    return repo


def rate(repo: Path, out: Path, concurrency: int, runs: int, candidates: int) -> float:
    done = subprocess.run(
        [EVALKIT, "gather", str(repo), "--out", str(out), "--concurrency", str(concurrency), "--runs", str(runs),
         "--min-lines", "1", "--max-tasks", str(candidates), "--neighbour-modules", "0"],
        capture_output=True, text=True,
    )  # fmt: skip
    if done.returncode != 0:
        sys.exit(f"gather failed (Docker and `make setup` needed): {done.stderr[-2000:]}")
    report = json.loads((out / "gather-report.json").read_text())
    if report["funnel"]["accepted"] != candidates:
        sys.exit(f"expected {candidates} tasks, got {report['funnel']}")
    return report["session"]["validated_per_minute"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--runs", type=int, default=2, help="gather --runs (test runs before and after)")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gather-bench-") as work:
        repo = build_repo(Path(work) / "calc", args.candidates)
        rates: dict[int, list[float]] = {1: [], 2: []}
        for repeat in range(args.repeats):
            for concurrency in (1, 2):
                out = Path(work) / f"out-{concurrency}-{repeat}"
                rates[concurrency].append(rate(repo, out, concurrency, args.runs, args.candidates))
                print(f"concurrency {concurrency}, repeat {repeat + 1}: {rates[concurrency][-1]:.2f} candidates/min")
    one, two = statistics.median(rates[1]), statistics.median(rates[2])
    print(f"candidates validated per minute ({args.candidates} candidates, --runs {args.runs}, median):")
    print(f"  concurrency 1: {one:.2f}")
    print(f"  concurrency 2: {two:.2f}")
    print(f"  ratio: {two / one:.2f}x (target >= 1.7x on 2 cores)")


if __name__ == "__main__":
    main()
