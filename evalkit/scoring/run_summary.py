"""The record of `summary.json`: what `score_run` computed for a whole run, returned to its caller
(the CLI shows it without reading the file back) and written as it is.

The per-model and per-tag entries stay plain dicts: their keys follow the axes and the k of
pass@k, and readers of older summaries (the leaderboard) take them as written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from evalkit.files import write_atomic
from evalkit.scoring.attempt_scores import AttemptScores
from evalkit.tasks import SkippedTask


class RunSummary(BaseModel):
    """summary.json, field for field and in this order."""

    run_id: str
    scored_at: str
    tasks_loaded: int  # of the suite's tasks, when the run started
    tasks_total: int
    skipped_tasks: list[SkippedTask] = Field(default_factory=list)  # the suite's tasks that did not load, and why
    weights: dict[str, float]
    interaction_penalties: dict
    errors: int
    error_kinds: dict[str, int]
    models: list[dict]
    tags: list[dict]
    # each reviewer whose verdicts the rows carry: reviews, failed ones, cost, and its calibration
    # on the run's suite when one was made (`evalkit reviewer calibrate`), as its file holds it
    reviewers: list[dict] = Field(default_factory=list)

    def write(self, path: Path) -> None:
        write_atomic(path, json.dumps(self.model_dump(), indent=2) + "\n")


@dataclass(frozen=True)
class ScoredRun:
    """What `score_run` wrote: one AttemptScores per scored attempt, and the run's summary."""

    scores: list[AttemptScores]
    summary: RunSummary
