"""The knowledge-cutoff split (evalkit/cutoff.py) of a run's attempt table, added to the per-model
entries of summary.json as `after_cutoff`: for the models whose run.json spec names a cutoff only,
so that a run without one summarises as before."""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from evalkit.cutoff import AFTER_CUTOFF, CutoffSplit, ResolvedAttempt, cutoff_splits
from evalkit.records import ERROR_STOP_REASONS


def model_cutoffs(models: Mapping[str, dict]) -> dict[str, str | None]:
    """Model → its knowledge cutoff, from run.json's public specs (None: none named, or an older run)."""
    return {name: (public or {}).get("knowledge_cutoff") for name, public in models.items()}


def frame_splits(frame: pd.DataFrame, cutoffs: Mapping[str, str | None]) -> dict[str, CutoffSplit]:
    """Per model with a cutoff, its split over the table's scored attempts (errored ones left out,
    as from every figure); a task's date is its `commit_date` column."""
    if frame.empty or not any(cutoffs.values()):
        return {}
    scored = frame[~frame["stop_reason"].isin(ERROR_STOP_REASONS)]
    attempts = [
        ResolvedAttempt(str(task), str(model), bool(resolved))
        for task, model, resolved in zip(scored["task_id"], scored["model"], scored["resolved"], strict=True)
    ]
    return cutoff_splits(attempts, frame_dates(frame), cutoffs)


def frame_dates(frame: pd.DataFrame) -> dict[str, str]:
    """Task → its commit date, from an attempt table's `commit_date` column; undated tasks absent
    (as are all in a table scored before dates were kept)."""
    if "commit_date" not in frame:
        return {}
    return {t: d for t, d in zip(frame["task_id"], frame["commit_date"], strict=True) if isinstance(d, str)}


def with_cutoff_splits(entries: list[dict], frame: pd.DataFrame, cutoffs: Mapping[str, str | None]) -> list[dict]:
    """`summarize(frame, "model")`'s entries, each of a model with a cutoff given its split."""
    splits = frame_splits(frame, cutoffs)
    for entry in entries:
        if (split := splits.get(entry["model"])) is not None:
            entry[AFTER_CUTOFF] = split.model_dump()
    return entries
