"""Gather on repositories nobody tuned for, and the table docs/gather.md reports: per repository the
commits scanned, candidates, environment success (ran / judged, and how many after a repair), the
losses by class, and the tasks accepted and kept.

Each REPO is gathered with gather's defaults into OUT/<name> (a gather already there continues
from its journal), unless --table-only, which reads the gather-report.json files as they are.

    python benchmarks/gather_anywhere.py OUT REPO [REPO ...] [--table-only] [-- GATHER OPTIONS]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

EVALKIT = str(Path(sys.executable).parent / "evalkit")


def suite_name(repo: str) -> str:
    """`/repos/owner__name.git` → `name`."""
    return Path(repo.rstrip("/")).name.removesuffix(".git").split("__")[-1]


def row(name: str, report: dict, seconds: float | None) -> str:
    funnel = report["funnel"]
    judged = funnel["environment_ran"] + funnel["environment_failed"]
    rate = f"{funnel['environment_ran']} of {judged} ({funnel['environment_ran'] / judged:.0%})" if judged else "-"
    losses = ", ".join(f"{n} {loss}" for loss, n in funnel.get("environment_losses", {}).items()) or "none"
    took = f"{seconds / 60:.0f} min" if seconds else ""
    return (
        f"| {name} | {funnel['scanned']} | {funnel['candidates']} | {rate} | {funnel.get('environment_repaired', 0)} "
        f"| {losses} | {funnel['accepted']} | {funnel['kept']} | {took} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("repos", nargs="+")
    parser.add_argument("--table-only", action="store_true")
    args, gather_options = parser.parse_known_args()
    rows = []
    for repo in args.repos:
        out = args.out / suite_name(repo)
        seconds = None
        if not args.table_only:
            started = time.monotonic()
            done = subprocess.run([EVALKIT, "gather", repo, "--out", str(out), *gather_options])
            seconds = time.monotonic() - started
            if done.returncode != 0:
                print(f"{repo}: gather exited {done.returncode}", file=sys.stderr)
        report = out / "gather-report.json"
        if report.is_file():
            rows.append(row(suite_name(repo), json.loads(report.read_text()), seconds))
    print("| repository | commits | candidates | environment ran the tests | after a repair | lost, by class "
          "| accepted | kept | time |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
