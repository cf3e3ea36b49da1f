"""What a person watching `evalkit run` sees: a live progress bar with per-model tallies and each
busy or failing endpoint while it runs (without a terminal: one line per attempt, per new 429 and
per change of an endpoint's failure reason), and a summary table at the end."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.live import Live
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from evalkit.axes import COMPOSITE, LABELS, MEAN_AXES, NOT_APPLICABLE, REVIEWER
from evalkit.cutoff import AFTER_CUTOFF, CutoffSplit
from evalkit.models.backoff import EndpointStates
from evalkit.records import AttemptRecord
from evalkit.runs.fitted_table import FitColumn, FittedTable
from evalkit.wording import counted

if TYPE_CHECKING:
    from evalkit.sandbox.engine_watch import EngineEvent, EngineWatch


class _Tally:
    def __init__(self) -> None:
        self.done = 0
        self.resolved = 0
        self.tokens = 0
        self.errors = 0  # endpoint or sandbox failures: not scored
        self.faults = 0  # malformed / unknown / bad-argument tool calls

    def add(self, record: AttemptRecord) -> None:
        self.done += 1
        self.resolved += record.resolved and not record.errored
        self.tokens += int(record.usage.get("total_tokens", 0))
        self.errors += record.errored
        self.faults += sum(v for k, v in record.faults.items() if k != "tool_error")


def endpoint_line(status: dict) -> str:
    """One endpoint as a person watching a run needs it: how busy it is and whether it pushed back.
    Empty when it is idle and never rate-limited."""
    failing = status.get("retries") or status.get("gave_up")
    busy = status["in_flight"] or status["waiting"] or status["waiting_until"] or status["rate_limited"] or failing
    if not busy:
        return ""
    cap = status["max_connections"]
    parts = [f"{status['in_flight']}{f'/{cap}' if cap else ''} in flight"]
    if status["waiting"]:
        parts.append(f"{status['waiting']} waiting")
    if status["waiting_until"]:
        parts.append(f"held off {status['waiting_until']:.1f}s")
    if status["rate_limited"]:
        parts.append(f"{status['rate_limited']}× rate-limited (429)")
    if failing:
        parts.append(failure_text(status))
    return f"{status['model']} @ {status['base_url']}: " + ", ".join(parts)


def failure_text(status: dict) -> str:
    """`7 retries (connection ×7), 1 gave up; last: connection: Connection refused`."""
    retries = status.get("retries") or {}
    total = sum(retries.values())
    parts = []
    if total:
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in sorted(retries.items()))
        parts.append(f"{total} retr{'y' if total == 1 else 'ies'} ({kinds})")
    if status.get("gave_up"):
        parts.append(f"{status['gave_up']} gave up (endpoint_error)")
    last = status.get("last_failure") or ""
    return ", ".join(parts) + (f"; last: {last[:120]}" if last else "")


class RunDisplay:
    """Live view of a run; use as a context manager and call `add` for every finished attempt.

    With `endpoints` (the endpoint states the run's clients share), the live view also shows each
    endpoint's requests in flight, requests waiting for a slot, and any 429 hold-off; without a
    terminal, a line is printed whenever an endpoint has been rate-limited again.

    With `engine` (the run's Docker engine watch), the live view shows how long the run has been
    waiting for an engine that stopped answering; without a terminal, a line is printed when it
    goes down and when it is back."""

    def __init__(
        self,
        console: Console,
        total: int,
        models: list[str],
        endpoints: EndpointStates | None = None,
        engine: EngineWatch | None = None,
    ) -> None:
        self.console = console
        self.total = total
        self.endpoints = endpoints
        self.engine = engine
        self._limited_seen: dict[tuple[str, str], int] = {}
        self._reasons_seen: dict[tuple[str, str], str | None] = {}
        self._reasons_lock = threading.Lock()
        self._stop_listening: Callable[[], None] | None = None
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
        if engine is not None and self._live is None:
            engine.subscribe(self._engine_changed)

    def __rich__(self) -> Group:
        table = Table(box=None, pad_edge=False)
        for column in ("model", "done", "resolved", "tokens", "errors", "bad tool calls"):
            table.add_column(column, justify="left" if column == "model" else "right")
        for model, tally in self.tallies.items():
            scored = tally.done - tally.errors
            rate = f"{tally.resolved} ({tally.resolved / scored:.0%})" if scored else "-"
            table.add_row(model, str(tally.done), rate, f"{tally.tokens:,}", str(tally.errors), str(tally.faults))
        lines = [Text(line, style="dim") for line in self.endpoint_lines()]
        if self.engine is not None and (down_s := self.engine.down_for()) is not None:
            waiting = f"Docker engine unavailable, waiting… {down_s:.0f} s (up to {self.engine.max_wait_s:.0f} s)"
            lines.append(Text(waiting, style="yellow"))
        return Group(self.progress, table, *lines)

    def _engine_changed(self, event: EngineEvent) -> None:
        if event.kind != "gone":  # the run's last line says so, with how to resume
            self.console.print(event.line(), highlight=False, markup=False, soft_wrap=True)

    def retrying(self, record: AttemptRecord) -> None:
        """An attempt lost with the Docker engine: recorded as sandbox_error, to be run again."""
        self.console.print(
            f"{record.task_id} {record.model} #{record.sample}: {record.stop_reason} "
            f"({(record.error or '')[:120]}); run again once the engine answers",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )

    def endpoint_lines(self) -> list[str]:
        if self.endpoints is None:
            return []
        return [line for status in self.endpoints.snapshot() if (line := endpoint_line(status))]

    def _report_rate_limits(self) -> None:
        """Without a live view: one line each time an endpoint has pushed back since the last."""
        if self.endpoints is None:
            return
        for status in self.endpoints.snapshot():
            key = (status["base_url"], status["model"])
            if status["rate_limited"] > self._limited_seen.get(key, 0):
                self._limited_seen[key] = status["rate_limited"]
                self.console.print(endpoint_line(status), highlight=False, markup=False, soft_wrap=True)

    def _report_failure(self, status: dict) -> None:
        """Without a live view: a line when an endpoint starts failing for another reason (kind
        and HTTP status), not one per retry."""
        key = (status["base_url"], status["model"])
        with self._reasons_lock:
            if self._reasons_seen.get(key) == status["last_failure_kind"]:
                return
            self._reasons_seen[key] = status["last_failure_kind"]
        line = f"{status['model']} @ {status['base_url']}: failing, {failure_text(status)}"
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def __enter__(self) -> RunDisplay:
        if self._live:
            self._live.__enter__()
        elif self.endpoints is not None:
            self._stop_listening = self.endpoints.on_failure(self._report_failure)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live:
            self._live.__exit__(*exc)
        if self._stop_listening is not None:
            self._stop_listening()

    def add(self, record: AttemptRecord) -> None:
        self.tallies.setdefault(record.model, _Tally()).add(record)
        self.progress.advance(self.bar)
        if self._live is None:
            self._report_rate_limits()
            done = int(self.progress.tasks[0].completed)
            verdict = "error (not scored)" if record.errored else "resolved" if record.resolved else "unresolved"
            if record.integrity.verdict != "clean":
                verdict += f" (integrity {record.integrity.verdict}: {', '.join(record.integrity.kinds())})"
            error = f" error: {record.error[:120]}" if record.error else ""
            self.console.print(
                f"[{done}/{self.total}] {record.task_id} {record.model} #{record.sample}: {verdict}, "
                f"{record.stop_reason}, {counted(record.turns, 'turn')}, {record.duration_s:.1f}s{error}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )


def _mean(entry: dict | None) -> str:
    """An axis's mean; "n/a" when it applies to none of the model's attempts, "-" when unknown."""
    if entry and entry.get("not_applicable"):
        return NOT_APPLICABLE
    return "-" if not entry or entry.get("mean") is None else f"{entry['mean']:.2f}"


def _resolved(entry: dict) -> list[str]:
    if entry.get("mean") is None:
        return ["-"]
    mean, (low, high) = entry["mean"], entry["ci95"]
    return [f"{mean:.1%}", f"[{low:.0%}–{high:.0%}]"]


def _integrity(entry: dict) -> list[str]:
    counts = entry.get("integrity") or {}
    return [f"{counts[v]} {v}" for v in ("fail", "warn") if counts.get(v)] or ["clean"]


def summary_table(models: list[dict], title: str) -> FittedTable:
    """Per model, from a run's summary.json: resolved with its 95 % CI, pass@k, the axes' means,
    cost, errors, integrity and stop reasons, laid out for the terminal's width (model, resolved
    and composite always; the rest by priority). The axes' intervals are in summary.json."""
    judged = any(entry["axes"].get(REVIEWER) for entry in models)
    multi = any(entry["samples"] > 1 for entry in models)

    def column(header: str, priority: int, cell, separator: str = " ", justify: str = "right") -> FitColumn:
        return FitColumn(header, [cell(entry) for entry in models], priority, separator, justify)

    def axis(name: str, priority: int) -> FitColumn:
        return column(LABELS[name], priority, lambda entry: [_mean(entry["axes"].get(name))])

    columns = [
        column("attempts", 4, lambda entry: [str(entry["attempts"])]),
        column("resolved [95% CI]", 0, _resolved_or_error),
    ]
    if any(entry.get(AFTER_CUTOFF) for entry in models):  # a model with a knowledge cutoff
        columns.append(column("after cutoff", 1, _after_cutoff))
    if multi:
        columns.append(column("pass@k", 4, lambda e: [f"@{k} {v:.2f}" for k, v in e["pass_at_k"].items()], ", "))
    columns += [axis(name, 0 if name == COMPOSITE else 1) for name in MEAN_AXES]
    if judged:
        columns.append(axis(REVIEWER, 3))
    columns += [
        column("cost/task $", 5, lambda e: ["-" if e["cost_per_task"] is None else f"{e['cost_per_task']:.4f}"]),
        column("median tokens", 5, lambda entry: [_count(entry["median_tokens"])]),
        column("errors", 2, lambda entry: [str(entry["errors"])]),
        column("integrity", 3, _integrity, " · ", "left"),
        column("stop reasons", 6, lambda e: [f"{k} {v}" for k, v in e["stop_reasons"].items()], ", ", "left"),
    ]
    keys = [entry["model"] for entry in models]
    return FittedTable(title, "model", keys, columns, "every figure is in the run's summary.json")


def skipped_tasks_lines(summary: dict) -> list[str]:
    """The suite's tasks a run left out because they did not load (from summary.json): a line
    "7 of 8 tasks loaded", then one per task with its file and reason. None: no lines."""
    skipped = summary.get("skipped_tasks") or []
    if not skipped:
        return []
    head = f"{summary['tasks_loaded']} of {summary['tasks_total']} tasks of the suite loaded; not run:"
    return [head, *(f"  {task['file']}: {task['reason']}" for task in skipped)]


def cutoff_lines(summary: dict) -> list[str]:
    """What the `after cutoff` column is over (summary.json): one line naming each model's cutoff and
    the tasks without a commit date left out of it; no line when no model has a cutoff."""
    splits = {e["model"]: CutoffSplit.model_validate(e[AFTER_CUTOFF]) for e in summary["models"] if e.get(AFTER_CUTOFF)}
    if not splits:
        return []
    each = "; ".join(f"{model}: {split.note()}" for model, split in splits.items())
    return [f"after cutoff: resolved on the tasks committed after the model's knowledge cutoff ({each})"]


def _after_cutoff(entry: dict) -> list[str]:
    if not entry.get(AFTER_CUTOFF):
        return ["-"]
    split = CutoffSplit.model_validate(entry[AFTER_CUTOFF])
    return [split.rate_text(), f"({counted(split.after_tasks, 'task')})"]


def _count(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def _resolved_or_error(entry: dict) -> list[str]:
    """The resolved rate, or `error` for a model none of whose attempts could be scored."""
    if entry.get("scored_attempts") == 0 and entry.get("errors"):
        return ["error"]
    return _resolved(entry["resolved_rate"])


def errors_line(summary: dict, retry_command: str) -> str | None:
    """For a run with errored attempts, the line that counts them by kind and gives `retry_command`
    (`evalkit run --run-id X --retry-errors`, with --out when not the default: a command that works
    as it is, the run's record supplying the rest); else None."""
    kinds = summary.get("error_kinds") or {}
    total = sum(kinds.values())
    if not total:
        return None
    counts = ", ".join(f"{kind} ×{n}" for kind, n in sorted(kinds.items()))
    return f"{counted(total, 'error')}: {counts} — not scored; run them again with `{retry_command}`"
