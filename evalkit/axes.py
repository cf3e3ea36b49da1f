"""The axes every attempt is scored on, in one list: weights, summaries, compare, the terminal,
the leaderboard and its JavaScript all read it, so adding an axis is its scorer plus one entry.

`correctness` is the hidden tests' verdict (shown as the resolved rate); the others are means over
an attempt's evidence in [0, 1], higher better. `composite` is their weighted mean (weights below,
overridable under [scoring.weights]); a reviewer model's `judge` score is reported beside the axes
and never weighted.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Axis:
    name: str  # the key in scores.jsonl, summary.json and evalkit.toml's [scoring.weights]
    label: str  # what a person reads (terminal, leaderboard)
    weight: float  # default weight in the composite
    meaning: str  # one line for the leaderboard's notes


AXES: tuple[Axis, ...] = (
    Axis("correctness", "correctness", 0.60, "the hidden FAIL_TO_PASS and PASS_TO_PASS tests pass (1 or 0)"),
    Axis("quality", "quality", 0.15, "lint, syntax, hygiene, scope and size of the diff"),
    Axis("efficiency", "efficiency", 0.10, "1 - the share of the token, turn and time budgets used"),
    Axis("interaction", "interaction", 0.15, "1 - penalties for tool misuse and an unspecific end"),
)
COMPOSITE = "composite"  # the weighted mean of AXES
JUDGE = "judge"  # a reviewer model's score: reported, never weighted

AXIS_NAMES: tuple[str, ...] = tuple(axis.name for axis in AXES)
# the per-model means shown beside the resolved rate (correctness is that rate), composite last
MEAN_AXES: tuple[str, ...] = (*(axis.name for axis in AXES if axis.name != "correctness"), COMPOSITE)
# every axis column of an attempt's scores row
SCORE_COLUMNS: tuple[str, ...] = (*AXIS_NAMES, COMPOSITE)
LABELS: dict[str, str] = {axis.name: axis.label for axis in AXES} | {COMPOSITE: COMPOSITE, JUDGE: JUDGE}
