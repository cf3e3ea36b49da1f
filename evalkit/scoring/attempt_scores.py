"""All four axes for one attempt, and the scoring settings they share.

`score_attempt` is a pure function of the task, the attempt's record, its trajectory events and
the base tree (plus a ruff subprocess inside the quality axis): re-scoring a run gives the same
numbers unless the settings changed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.errors import EvalkitError
from evalkit.runs.store import AttemptRecord
from evalkit.scoring.composite import Weights, composite
from evalkit.scoring.efficiency import EfficiencyScore, score_efficiency
from evalkit.scoring.interaction import InteractionPenalties, InteractionScore, score_interaction
from evalkit.scoring.judge import JudgeVerdict
from evalkit.scoring.patches import changed_paths
from evalkit.scoring.prices import Price, price_table
from evalkit.scoring.quality import DEFAULT_FORBIDDEN, QualityScore, score_quality
from evalkit.tasks.model import Limits, Task


class ScoringSettings(BaseModel):
    """`[scoring]` of evalkit.toml (and `[prices]` beside it)."""

    model_config = ConfigDict(extra="forbid")

    weights: Weights = Field(default_factory=Weights)
    interaction: InteractionPenalties = Field(default_factory=InteractionPenalties)
    forbidden: list[str] = Field(default_factory=lambda: list(DEFAULT_FORBIDDEN), description="Globs never to edit.")
    prices: dict[str, Price] = Field(default_factory=price_table, exclude=True)


def load_settings(config: dict, where: Path) -> ScoringSettings:
    """Settings from a parsed evalkit.toml (`{}` gives the defaults)."""
    try:
        settings = ScoringSettings.model_validate(config.get("scoring", {}))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise EvalkitError(f"{where}: [scoring] {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    settings.prices = price_table(config.get("prices"), str(where))
    return settings


class CorrectnessAxis(BaseModel):
    score: float  # 1 resolved, else 0
    resolved: bool
    fail_to_pass: float  # fraction passed
    pass_to_pass: float
    patch_applied: bool


class AttemptScores(BaseModel):
    """One row of scores.jsonl."""

    run_id: str
    task_id: str
    model: str
    sample: int
    tags: list[str] = Field(default_factory=list)
    correctness: CorrectnessAxis
    quality: QualityScore
    efficiency: EfficiencyScore
    interaction: InteractionScore
    composite: float
    weights: dict[str, float]
    judge: JudgeVerdict | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.model, self.sample)


def _fraction(passed: list[str], failed: list[str]) -> float:
    total = len(passed) + len(failed)
    return len(passed) / total if total else 1.0


def score_attempt(
    task: Task,
    record: AttemptRecord,
    events: list[dict],
    base_file: Callable[[str], str | None],
    settings: ScoringSettings,
    price: Price | None,
    judge: JudgeVerdict | None = None,
) -> AttemptScores:
    correctness = CorrectnessAxis(
        score=1.0 if record.resolved else 0.0,
        resolved=record.resolved,
        fail_to_pass=_fraction(record.fail_to_pass.passed, record.fail_to_pass.failed),
        pass_to_pass=_fraction(record.pass_to_pass.passed, record.pass_to_pass.failed),
        patch_applied=record.patch_applied,
    )
    forbidden = [*settings.forbidden, *filter(None, task.metadata.get("forbidden", "").split(","))]
    quality = score_quality(record.model_patch, task.patch, base_file, forbidden=forbidden)
    start = next((e for e in events if e.get("type") == "start"), {})
    limits = Limits.model_validate(start["limits"]) if "limits" in start else task.limits  # as the run set them
    efficiency = score_efficiency(record, limits, price)
    touched = changed_paths(record.model_patch) if record.model_patch.strip() else []
    interaction = score_interaction(record, events, touched, settings.interaction)
    axes = {
        "correctness": correctness.score,
        "quality": quality.score,
        "efficiency": efficiency.score,
        "interaction": interaction.score,
    }
    return AttemptScores(
        run_id=record.run_id,
        task_id=record.task_id,
        model=record.model,
        sample=record.sample,
        tags=task.tags,
        correctness=correctness,
        quality=quality,
        efficiency=efficiency,
        interaction=interaction,
        composite=composite(axes, settings.weights),
        weights=settings.weights.normalised(),
        judge=judge,
    )
