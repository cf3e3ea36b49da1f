"""`evalkit integrity RUN_DIR`: the integrity flags of every attempt of a run, re-scanned from its
results and trajectories with the current rules (the test run's own findings as recorded)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from evalkit.cli.common import app, console
from evalkit.flag_kinds import FlagKind
from evalkit.runs.folders import run_folder
from evalkit.wording import counted


@app.command("integrity")
def integrity(
    run_dir: Annotated[Path, typer.Argument(help="A run folder, or the id of a run in reports/runs.")],
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write one JSON row per attempt to this file; `--json -` (or last) prints them."),
    ] = None,
    kind: Annotated[
        list[FlagKind] | None, typer.Option(help="Only flags of this kind (repeatable).", case_sensitive=False)
    ] = None,
    every: Annotated[bool, typer.Option("--all", help="List clean attempts too.")] = False,
) -> None:
    """List the integrity flags of a run's attempts, with each attempt's verdict.

    Flags: history mining, network probes, hidden-test probes, test and harness tampering, writes
    outside the workspace."""
    from rich.table import Table

    from evalkit.files import write_atomic
    from evalkit.runs.store import RunStore
    from evalkit.trajectory import read_trajectory
    from evalkit.verify.integrity_scan import recorded_test_flags, scan_attempt

    run_dir = run_folder(run_dir)
    store = RunStore(run_dir)
    store.paths.require_results(run_dir)
    wanted = set(kind or FlagKind)
    rows = []
    for record in sorted(store.records(), key=lambda r: (r.task_id, r.model, r.sample)):
        trajectory = store.paths.trajectory(record.trajectory) if record.trajectory else None
        events = read_trajectory(trajectory) if trajectory and trajectory.exists() else []
        report = scan_attempt(
            events, record.model_patch, recorded_test_flags(record.integrity), record.integrity.restored
        )
        flags = [f for f in report.flags if f.kind in wanted]
        if flags or every:
            rows.append((record, report, flags))
    if json_out is not None:
        lines = "".join(
            json.dumps(
                {
                    "task_id": record.task_id,
                    "model": record.model,
                    "sample": record.sample,
                    "verdict": report.verdict,
                    "tests_resolved": record.hidden_tests_passed,
                    "flags": [f.model_dump(mode="json") for f in flags],
                    "restored": report.restored,
                }
            )
            + "\n"
            for record, report, flags in rows
        )
        if json_out == "-":
            sys.stdout.write(lines)
        else:
            write_atomic(Path(json_out), lines)
            console.print(f"{counted(len(rows), 'JSON row')} written to {escape(json_out)}")
        return
    table = Table(title=f"integrity of run {escape(run_dir.name)}", show_lines=False)
    for column in ("task", "model", "sample", "verdict", "kind", "step", "evidence"):
        table.add_column(column, overflow="fold")
    for record, report, flags in rows:
        colour = {"fail": "red", "warn": "yellow"}.get(report.verdict, "green")
        verdict = f"[{colour}]{report.verdict}[/]"
        if not flags:
            table.add_row(escape(record.task_id), escape(record.model), str(record.sample), verdict, "", "", "")
        for flag in flags:
            step = "" if flag.step is None else str(flag.step)
            table.add_row(
                escape(record.task_id),
                escape(record.model),
                str(record.sample),
                verdict,
                flag.kind.value,
                step or flag.source,
                escape(flag.evidence),
            )
    console.print(table)
    flagged = sum(1 for _, report, flags in rows if flags)
    failing = sum(1 for _, report, flags in rows if flags and report.verdict == "fail")
    console.print(f"{counted(flagged, 'flagged attempt')}, {failing} with a failing verdict, of {len(store.records())}")
