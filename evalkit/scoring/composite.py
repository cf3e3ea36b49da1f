"""The composite score of an attempt: a weighted mean of the four axes.

Default weights come from the axes' list (evalkit/axes.py: correctness 0.60, quality 0.15,
efficiency 0.10, interaction 0.15); override them in evalkit.toml under [scoring.weights]; they
are normalised to sum to 1 and stored with the run's scores. Correctness counts 1 for a resolved
task and 0 otherwise: partial test passes are reported on the correctness axis but earn no
composite credit, as in SWE-bench and CursorBench.
An axis that does not apply to an attempt (its agent did not produce the evidence it needs, see
evalkit/axes.py) is left out and the weights are renormalised over the axes that apply.
A reviewer model's verdict (evalkit/review/) is part of the composite only when the user's
weights give `reviewer` a weight (default 0); an attempt whose review failed then has the weights
renormalised over the rest.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from evalkit.axes import AXES as AXIS_LIST
from evalkit.axes import AXIS_NAMES as AXES
from evalkit.axes import REVIEWER

WEIGHTED = (*AXES, REVIEWER)


class _WeightRules(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _some_weight(self) -> _WeightRules:
        if sum(self.model_dump().values()) <= 0:
            raise ValueError("at least one weight must be positive")
        return self

    def normalised(self) -> dict[str, float]:
        """Each axis's weight over the total, and the reviewer's when it has one."""
        raw = self.model_dump()
        total = sum(raw.values())
        return {name: raw[name] / total for name in WEIGHTED if name in AXES or raw[name] > 0}


# one float field per axis of evalkit/axes.py, defaulting to its weight
Weights = create_model(
    "Weights",
    __base__=_WeightRules,
    __doc__="Composite weights per axis ([scoring.weights]); normalised to sum to 1.",
    **{axis.name: (float, Field(axis.weight, ge=0)) for axis in AXIS_LIST},
    **{REVIEWER: (float, Field(0.0, ge=0, description="The reviewer's verdict; 0: kept out of the composite."))},
)


def applied_weights(weights: _WeightRules, applicable: set[str]) -> dict[str, float]:
    """The weights of the axes that apply, renormalised to sum to 1 (all of them: `normalised()`
    as it is); {} when none of those has weight."""
    normalised = weights.normalised()
    if applicable >= set(normalised):
        return normalised
    total = sum(weight for name, weight in normalised.items() if name in applicable)
    return {name: weight / total for name, weight in normalised.items() if name in applicable} if total > 0 else {}


def composite(axis_scores: dict[str, float | None], weights: _WeightRules) -> float | None:
    """The weighted mean of the axes with a score (None: not applicable); None when no axis that
    applies has weight."""
    used = applied_weights(weights, {axis for axis, score in axis_scores.items() if score is not None})
    if not used:
        return None
    return round(sum(weight * axis_scores[axis] for axis, weight in used.items()), 4)
