"""What a person watching `evalkit run` sees: a live progress bar with per-model tallies while it
runs (one line per attempt when the output is not a terminal), and a summary table at the end."""

from __future__ import annotations

import statistics
from collections import Counter

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evalkit.runs.store import AttemptRecord


class _Tally:
    def __init__(self) -> None:
        self.done = 0
        self.resolved = 0
        self.tokens = 0
        self.errors = 0  # endpoint or sandbox failures
        self.faults = 0  # malformed / unknown / bad-argument tool calls

    def add(self, record: AttemptRecord) -> None:
        self.done += 1
        self.resolved += record.resolved
        self.tokens += int(record.usage.get("total_tokens", 0))
        self.errors += record.error is not None
        self.faults += sum(v for k, v in record.faults.items() if k != "tool_error")


class RunDisplay:
    """Live view of a run; use as a context manager and call `add` for every finished attempt."""

    def __init__(self, console: Console, total: int, models: list[str]) -> None:
        self.console = console
        self.total = total
        self.tallies = {m: _Tally() for m in models}
        self.progress = Progress(
            TextColumn("[bold]attempts"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
        )
        self.bar = self.progress.add_task("attempts", total=total)
        self._live = Live(self, console=console, refresh_per_second=4, transient=False) if console.is_terminal else None

    def __rich__(self) -> Group:
        table = Table(box=None, pad_edge=False)
        for column in ("model", "done", "resolved", "tokens", "errors", "bad tool calls"):
            table.add_column(column, justify="left" if column == "model" else "right")
        for model, tally in self.tallies.items():
            rate = f"{tally.resolved} ({tally.resolved / tally.done:.0%})" if tally.done else "-"
            table.add_row(model, str(tally.done), rate, f"{tally.tokens:,}", str(tally.errors), str(tally.faults))
        return Group(self.progress, table)

    def __enter__(self) -> RunDisplay:
        if self._live:
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live:
            self._live.__exit__(*exc)

    def add(self, record: AttemptRecord) -> None:
        self.tallies.setdefault(record.model, _Tally()).add(record)
        self.progress.advance(self.bar)
        if self._live is None:
            done = int(self.progress.tasks[0].completed)
            verdict = "resolved" if record.resolved else "unresolved"
            error = f" error: {record.error[:120]}" if record.error else ""
            self.console.print(
                f"[{done}/{self.total}] {record.task_id} {record.model} #{record.sample}: {verdict}, "
                f"{record.stop_reason}, {record.turns} turns, {record.duration_s:.1f}s{error}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


def summary_table(records: list[AttemptRecord], title: str, models: list[str]) -> Table:
    """Per model (in the order given): attempts, resolved, stop reasons, tokens, time, faults."""
    by_model: dict[str, list[AttemptRecord]] = {m: [] for m in models}
    for record in records:
        by_model.setdefault(record.model, []).append(record)
    table = Table(title=title)
    for column in (
        "model",
        "attempts",
        "resolved",
        "resolved %",
        "stop reasons",
        "median turns",
        "tokens",
        "median time s",
        "bad tool calls",
        "retries",
        "errors",
    ):
        table.add_column(column, justify="left" if column in {"model", "stop reasons"} else "right")
    for model, rows in by_model.items():
        if not rows:
            continue
        resolved = sum(r.resolved for r in rows)
        stops = Counter(r.stop_reason for r in rows)
        table.add_row(
            model,
            str(len(rows)),
            str(resolved),
            f"{resolved / len(rows):.1%}",
            ", ".join(f"{k} {v}" for k, v in stops.most_common()),
            f"{statistics.median(r.turns for r in rows):g}",
            f"{sum(int(r.usage.get('total_tokens', 0)) for r in rows):,}",
            f"{statistics.median(r.duration_s for r in rows):.1f}",
            str(sum(v for r in rows for k, v in r.faults.items() if k != "tool_error")),
            str(sum(sum(r.retries.values()) for r in rows)),
            str(sum(r.error is not None for r in rows)),
        )
    return table
