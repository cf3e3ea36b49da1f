"""Contamination control: a model's resolved rate on the tasks committed after its knowledge cutoff.

A model trained on a repository's history may have seen a task's reference change; the tasks
committed after its training cutoff it cannot have seen. A model's `knowledge_cutoff` (evalkit.toml)
is a year-month ("2025-06") or a date ("2025-06-15"); a task gathered from git carries its commit's
author date (`metadata.commit_date`, ISO 8601).

The rule: a task is *after* the cutoff when its commit's calendar date, as written (the author's
own time zone), is later than the last day the cutoff covers. A month covers all of it, so with
"2025-06" a task of 2025-06-30 is not after and one of 2025-07-01 is; a date covers that day.
Tasks without a readable commit date (bundled, synthetic) are in the all-tasks rate but in neither
side of the split: they are counted apart (`undated_tasks`). Rates are over tasks, each task's
samples averaged first, as summary.json's resolved rate is.
"""

from __future__ import annotations

import calendar
import re
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime

from pydantic import BaseModel

from evalkit.wording import counted

COMMIT_DATE = "commit_date"  # the task metadata key gather writes
AFTER_CUTOFF = "after_cutoff"  # the key of a model's split in its summary.json entry
_CUTOFF = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
CUTOFF_FORM = 'a year-month ("2025-06") or a date ("2025-06-15")'


def cutoff_text(value: object) -> str:
    """A cutoff as evalkit records it ("2025-06" or "2025-06-15"), from a string or a TOML date;
    ValueError saying what is expected otherwise."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str):
        try:
            last_day(value)
        except ValueError:
            pass
        else:
            return value
    shown = repr(value) if isinstance(value, str) else value
    raise ValueError(f"must be {CUTOFF_FORM}, got {shown}")


def last_day(cutoff: str) -> date:
    """The last day a cutoff covers: the day itself, or the month's last day."""
    match = _CUTOFF.match(cutoff)
    if not match:
        raise ValueError(cutoff)
    year, month, day = int(match[1]), int(match[2]), match[3]
    if not 1 <= month <= 12:
        raise ValueError(cutoff)
    return date(year, month, int(day) if day else calendar.monthrange(year, month)[1])


def commit_day(commit_date: str | None) -> date | None:
    """The calendar date of an ISO 8601 commit date as written; None when absent or unreadable."""
    if not commit_date:
        return None
    try:
        return datetime.fromisoformat(commit_date.strip().replace("Z", "+00:00")).date()
    except ValueError:
        return None


@dataclass(frozen=True)
class ResolvedAttempt:
    """One scored attempt (errored attempts are left out by the caller, as from every figure)."""

    task_id: str
    model: str
    resolved: bool


class CutoffSplit(BaseModel):
    """A model's resolved rate on all its tasks and on those committed after its knowledge cutoff."""

    cutoff: str
    tasks: int  # tasks with a scored attempt
    resolved_rate: float | None  # over all of them
    after_tasks: int  # of those, committed after the cutoff
    after_rate: float | None  # over those (None: no task after the cutoff)
    undated_tasks: int  # without a commit date: in `tasks`, in neither side of the split

    def rate_text(self) -> str:
        """`40.0%`, or `-` when no task is after the cutoff."""
        return "-" if self.after_rate is None else f"{self.after_rate:.1%}"

    def shown(self) -> str:
        """`after cutoff: 40.0% (2 tasks)`."""
        return f"after cutoff: {self.rate_text()} ({counted(self.after_tasks, 'task')})"

    def note(self) -> str:
        """The cutoff, and the undated tasks left out of the split when there are any."""
        if not self.undated_tasks:
            return f"knowledge cutoff {self.cutoff}"
        return f"knowledge cutoff {self.cutoff}, {counted(self.undated_tasks, 'task')} without a commit date left out"


def split_rates(per_task: Mapping[str, float], dates: Mapping[str, str | None], cutoff: str) -> CutoffSplit:
    """The split over per-task resolved rates (task → share of its samples resolved)."""
    end = last_day(cutoff)
    days = {task: commit_day(dates.get(task)) for task in per_task}
    after = [rate for task, rate in per_task.items() if (day := days[task]) is not None and day > end]
    return CutoffSplit(
        cutoff=cutoff,
        tasks=len(per_task),
        resolved_rate=_mean(per_task.values()),
        after_tasks=len(after),
        after_rate=_mean(after),
        undated_tasks=sum(day is None for day in days.values()),
    )


def cutoff_splits(
    attempts: Iterable[ResolvedAttempt], dates: Mapping[str, str | None], cutoffs: Mapping[str, str | None]
) -> dict[str, CutoffSplit]:
    """Per model with a cutoff (`cutoffs`: model → cutoff or None), its split; `dates` maps a task
    to its commit date (absent or None: undated)."""
    outcomes: dict[str, dict[str, list[bool]]] = {}
    for attempt in attempts:
        outcomes.setdefault(attempt.model, {}).setdefault(attempt.task_id, []).append(attempt.resolved)
    return {
        model: split_rates({task: statistics.fmean(r) for task, r in per_task.items()}, dates, cutoff)
        for model, per_task in outcomes.items()
        if (cutoff := cutoffs.get(model))
    }


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return round(statistics.fmean(values), 4) if values else None
