"""Body of `evalkit stats`: a plain function over a console returning the exit code, so cli/
only declares options and tests need no CLI runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from evalkit.errors import EvalkitError
from evalkit.stats.reference import reference_from_source, shipped_reference
from evalkit.stats.suite_stats import MEASURES, Description, TaskFigures, row_figures, summarize, task_figures
from evalkit.tasks.load import load_suite
from evalkit.tasks.swebench import read_swebench_rows
from evalkit.wording import counted


def load_figures(path: Path) -> tuple[str, list[TaskFigures], list[str]]:
    """Per-task figures of a suite (folder or .jsonl/.json of tasks) or of a SWE-bench file
    (.jsonl/.json/.csv/.parquet), with one line per task that could not be read. A .jsonl whose
    rows are not all tasks (e.g. without FAIL_TO_PASS) is measured as raw rows, keeping every row."""
    if path.is_dir() or not path.exists():
        suite = load_suite(path)
        return suite.name, [task_figures(t) for t in suite.tasks], [str(e) for e in suite.skipped]
    if path.suffix.lower() in (".json", ".jsonl"):
        suite = load_suite(path)
        if not suite.skipped:
            return suite.name, [task_figures(t) for t in suite.tasks], []
        try:
            rows = read_swebench_rows(str(path))
        except EvalkitError:
            return suite.name, [task_figures(t) for t in suite.tasks], [str(e) for e in suite.skipped]
        return path.stem, [row_figures(row) for row in rows], []
    return path.stem, [row_figures(row) for row in read_swebench_rows(str(path))], []


def stats_command(suite: Path, json_out: bool, reference: str | None, console: Console) -> int:
    """The suite's figures beside SWE-bench's (shipped, or computed now from `reference`) and
    the published CursorBench figures; a table, or JSON with `json_out`."""
    name, per_task, skipped = load_figures(suite)
    summary = summarize(per_task)
    ref = reference_from_source(reference) if reference else shipped_reference()
    if json_out:
        payload = {
            "measures": MEASURES,
            "suite": {
                "name": name,
                "path": str(suite),
                "tasks": len(per_task),
                "skipped": skipped,
                "figures": summary,
                "underspecified": [f.id for f in per_task if f.underspecified],
                "per_task": [f.model_dump() for f in per_task],
            },
            "reference": ref,
        }
        console.out(json.dumps(payload, indent=2, ensure_ascii=False), highlight=False)
        return 0
    console.print(_table(name, len(per_task), summary, ref))
    _footer(console, suite, skipped, ref)
    vague = [f for f in per_task if f.underspecified]
    if vague:
        console.print(
            f"[yellow]{counted(len(vague), 'task')} of {len(per_task)} underspecified[/] (the tests need "
            f"names the prompt does not give); first: {escape(vague[0].id)} needs "
            + escape(", ".join(vague[0].underspecified)),
            highlight=False,
            soft_wrap=True,
        )
    return 0


def _table(name: str, total: int, summary: dict[str, Description], ref: dict[str, Any]) -> Table:
    # Every text is escaped: "[q1–q3]" and suite names with brackets are not rich markup.
    table = Table(title=escape(f"{name}: {counted(total, 'task')} beside SWE-bench, median [q1–q3]"))
    table.add_column("measure")
    table.add_column(escape(f"{name}\nmedian [q1–q3]"), justify="right")
    table.add_column(escape(f"{name}\nmean"), justify="right")
    computed = list(ref["computed"].values())
    for entry in computed:
        table.add_column(escape(f"{entry['label']}\n{counted(entry['rows'], 'row')}"), justify="right")
    published = ref["published"]
    table.add_column(escape(published["label"]))
    for measure, title in MEASURES.items():
        own = summary[measure]
        cells = [
            title,
            _cell(own, total),
            "—" if own["mean"] is None else f"{own['mean']:,.1f}",
            *(_cell(entry["figures"][measure], entry["rows"]) for entry in computed),
            published["figures"].get(measure, {}).get("text", ""),
        ]
        table.add_row(*(escape(cell) for cell in cells))
    return table


def _cell(desc: Description, total: int) -> str:
    if not desc["n"]:
        return "—"
    text = f"{_number(desc['median'])} [{_number(desc['q1'])}–{_number(desc['q3'])}]"
    return text if desc["n"] == total else f"{text} (n={desc['n']})"


def _number(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.1f}"


def _footer(console: Console, suite: Path, skipped: list[str], ref: dict[str, Any]) -> None:
    console.print("Quartiles by linear interpolation; (n=…) where a measure covers fewer rows than the source has.")
    for entry in ref["computed"].values():
        console.print(
            f"{escape(entry['label'])}: {escape(entry['file'])} from {escape(entry['source'])}, "
            f"{counted(entry['rows'], 'row')}, "
            f"computed {entry['computed_at']}; {escape(entry['caveat'])}",
            highlight=False,
            soft_wrap=True,
        )
    published = ref["published"]
    console.print(
        f"{escape(published['label'])}: {escape(published['source'])}; {escape(published['note'])}",
        highlight=False,
        soft_wrap=True,
    )
    if skipped:
        console.print(
            f"[yellow]{counted(len(skipped), 'task')} of {escape(str(suite))} not counted[/]; "
            f"first: {escape(skipped[0])}",
            highlight=False,
            soft_wrap=True,
        )
