"""`evalkit compare` and the models' knowledge cutoffs: for a side whose model names one (run.json),
its resolved rate over the paired tasks committed after it (evalkit/cutoff.py), beside its rate
over all the paired tasks: the same tasks and per-task means as the comparison's resolved row, so
the two figures can be read together. Informs only; never the exit code."""

from __future__ import annotations

from collections.abc import Mapping

from evalkit.cutoff import CutoffSplit, split_rates
from evalkit.report.compare.findings import Comparison, TaskOutcome


def side_split(
    outcomes: list[TaskOutcome], new: bool, dates: Mapping[str, str], cutoff: str | None
) -> CutoffSplit | None:
    """One side's split over the paired tasks (None: its model has no cutoff)."""
    if not cutoff:
        return None
    per_task = {o.task_id: o.new_resolved if new else o.base_resolved for o in outcomes}
    return split_rates(per_task, dates, cutoff)


def cutoff_lines(comparison: Comparison) -> list[str]:
    """`base gpt-4o (knowledge cutoff 2025-06): resolved 62.5%, after cutoff: 50.0% (2 tasks)`, per
    side with a cutoff; none when neither model has one."""
    lines = []
    for side, model, split in (
        ("base", comparison.base_model, comparison.base_after_cutoff),
        ("new", comparison.new_model, comparison.new_after_cutoff),
    ):
        if split is not None:
            rate = "-" if split.resolved_rate is None else f"{split.resolved_rate:.1%}"
            lines.append(f"{side} {model} ({split.note()}): resolved {rate}, {split.shown()}")
    return lines
