"""The composite score of an attempt: a weighted mean of the four axes.

Default weights: correctness 0.60, quality 0.15, efficiency 0.10, interaction 0.15 (override in
evalkit.toml under [scoring.weights]; they are normalised to sum to 1 and stored with the run's
scores). Correctness counts 1 for a resolved task and 0 otherwise: partial test passes are
reported on the correctness axis but earn no composite credit, as in SWE-bench and CursorBench.
A reviewer model's verdict is never part of the composite.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

AXES = ("correctness", "quality", "efficiency", "interaction")


class Weights(BaseModel):
    model_config = ConfigDict(extra="forbid")

    correctness: float = Field(0.60, ge=0)
    quality: float = Field(0.15, ge=0)
    efficiency: float = Field(0.10, ge=0)
    interaction: float = Field(0.15, ge=0)

    @model_validator(mode="after")
    def _some_weight(self) -> Weights:
        if sum(self.model_dump().values()) <= 0:
            raise ValueError("at least one weight must be positive")
        return self

    def normalised(self) -> dict[str, float]:
        raw = self.model_dump()
        total = sum(raw.values())
        return {axis: raw[axis] / total for axis in AXES}


def composite(axis_scores: dict[str, float], weights: Weights) -> float:
    normalised = weights.normalised()
    return round(sum(normalised[axis] * axis_scores[axis] for axis in AXES), 4)
