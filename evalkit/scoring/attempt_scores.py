"""All four axes for one attempt, and the scoring settings they share.

An axis whose evidence the attempt's agent did not produce (evalkit/axes.py: `needs`) is not
applicable: its score is None, its figures stay (interaction's counts are left empty), and the
composite renormalises the weights over the axes that apply.

`score_attempt` is a pure function of the task, the attempt's record, its trajectory events and
the base tree (plus a ruff subprocess inside the quality axis): re-scoring a run gives the same
numbers unless the settings changed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from evalkit.axes import AXES, REVIEWER
from evalkit.cutoff import COMMIT_DATE
from evalkit.diffs import changed_paths, substantive_paths
from evalkit.errors import EvalkitError
from evalkit.integrity import IntegrityPolicy, IntegrityReport, counts_as_resolved
from evalkit.plain_errors import plain_summary
from evalkit.records import AttemptRecord
from evalkit.review.verdict import ReviewVerdict
from evalkit.scoring.composite import Weights, applied_weights, composite
from evalkit.scoring.efficiency import EfficiencyScore, score_efficiency
from evalkit.scoring.interaction import InteractionPenalties, InteractionScore, score_interaction
from evalkit.scoring.prices import Price, price_table
from evalkit.scoring.quality import (
    DEFAULT_FORBIDDEN,
    QualityCache,
    QualityDraft,
    QualityScore,
    broken_share,
    check_quality_costs,
    draft_quality,
    score_quality,
)
from evalkit.tasks.model import Limits, Task
from evalkit.verify.integrity_scan import recorded_test_flags, scan_attempt


class ScoringSettings(BaseModel):
    """`[scoring]` of evalkit.toml (and `[prices]` beside it)."""

    model_config = ConfigDict(extra="forbid")

    weights: Weights = Field(default_factory=Weights)
    interaction: InteractionPenalties = Field(default_factory=InteractionPenalties)
    forbidden: list[str] = Field(default_factory=lambda: list(DEFAULT_FORBIDDEN), description="Globs never to edit.")
    quality: dict[str, float] = Field(
        default_factory=dict, description="Cost per finding of quality parts (lint, markers, hygiene, ...), >= 0."
    )

    @field_validator("quality")
    @classmethod
    def _known_quality_parts(cls, value: dict[str, float]) -> dict[str, float]:
        check_quality_costs(value)  # a ValueError names the unknown part and the known ones
        return value
    integrity: IntegrityPolicy = Field(
        "fail", description="`fail`: an attempt with a failing integrity flag is unresolved; `flag`: only shown."
    )
    prices: dict[str, Price] = Field(default_factory=price_table, exclude=True)


def load_settings(config: dict, where: Path) -> ScoringSettings:
    """Settings from a parsed evalkit.toml (`{}` gives the defaults)."""
    try:
        settings = ScoringSettings.model_validate(config.get("scoring", {}))
    except ValidationError as exc:
        raise EvalkitError(f"{where}: [scoring] {plain_summary(exc, ScoringSettings)}") from None
    settings.prices = price_table(config.get("prices"), str(where))
    return settings


class CorrectnessAxis(BaseModel):
    score: float | None  # 1 resolved, else 0 (None: not applicable, never while it needs only the diff)
    resolved: bool  # the hidden tests passed and the integrity policy let the verdict stand
    tests_resolved: bool | None = None  # what the hidden tests alone said (set from `resolved` on older rows)
    fail_to_pass: float  # fraction passed
    pass_to_pass: float
    patch_applied: bool

    @model_validator(mode="after")
    def _tests_default_to_verdict(self) -> CorrectnessAxis:
        if self.tests_resolved is None:  # a row scored before integrity existed
            self.tests_resolved = self.resolved
        return self


class AttemptScores(BaseModel):
    """One row of scores.jsonl."""

    model_config = ConfigDict(populate_by_name=True)

    run_id: str
    task_id: str
    model: str
    sample: int
    tags: list[str] = Field(default_factory=list)
    # the task's commit author date (metadata.commit_date), for the knowledge-cutoff split (evalkit/cutoff.py);
    # None: an undated task, or a row scored before dates were kept
    commit_date: str | None = None
    correctness: CorrectnessAxis
    quality: QualityScore
    efficiency: EfficiencyScore
    interaction: InteractionScore
    composite: float | None  # None: no axis with weight applies
    weights: dict[str, float]  # the weights the composite used: over the axes that apply, summing to 1
    did_work: bool = True  # False: the change was empty, did not apply, or was all put back / whitespace
    integrity: IntegrityReport = Field(default_factory=IntegrityReport)
    # the reviewer's verdict, apart from the axes (rows scored before the reviewer existed call it `judge`)
    review: ReviewVerdict | None = Field(None, validation_alias=AliasChoices("review", "judge"))

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.model, self.sample)


def _fraction(passed: list[str], failed: list[str]) -> float:
    total = len(passed) + len(failed)
    return len(passed) / total if total else 1.0


def did_work(record: AttemptRecord) -> bool:
    """Whether the attempt changed anything that counts: a change that applied and of which more
    than whitespace is left once the parts put back before the hidden tests are set aside."""
    if not record.patch_applied or not record.model_patch.strip():
        return False
    put_back = {label for label in record.integrity.restored if " " not in label}  # whole files only
    return any(path not in put_back for path in substantive_paths(record.model_patch))


def _started_limits(events: list[dict]) -> Limits | None:
    """The limits in the trajectory's start event: where rows from before `AttemptRecord.limits` kept them."""
    start = next((e for e in events if e.get("type") == "start"), {})
    return Limits.model_validate(start["limits"]) if "limits" in start else None


def _forbidden(task: Task, settings: ScoringSettings) -> list[str]:
    return [*settings.forbidden, *filter(None, task.metadata.get("forbidden", "").split(","))]


def draft_attempt_quality(
    task: Task,
    record: AttemptRecord,
    base_file: Callable[[str], str | None],
    settings: ScoringSettings,
    cache: QualityCache,
) -> QualityDraft:
    """The attempt's quality axis but for lint, so that a run can lint many attempts at once and
    hand each `finish_quality`'s result to `score_attempt(quality=...)`."""
    return draft_quality(record.model_patch, task.patch, base_file, _forbidden(task, settings), settings.quality, cache)


def score_attempt(
    task: Task,
    record: AttemptRecord,
    events: list[dict],
    base_file: Callable[[str], str | None],
    settings: ScoringSettings,
    price: Price | None,
    review: ReviewVerdict | None = None,
    quality_cache: QualityCache | None = None,
    quality: QualityScore | None = None,
    user_price: Price | None = None,
) -> AttemptScores:
    """All four axes of one attempt; None on those whose evidence the agent did not produce. No
    work (see `did_work`) earns 0 on quality, efficiency, interaction (where they apply) and the
    composite; a failing integrity verdict under `integrity = "fail"` earns 0 on correctness and
    the composite, whatever the tests said. The figures behind each axis are kept either way.
    `quality_cache` is what a run's attempts share (see `QualityCache`), and `quality` the quality
    axis when the caller scored it already (`draft_attempt_quality`); neither changes a score.
    `user_price` prices the simulated user's tokens, apart from the agent's (`price`)."""
    integrity = scan_attempt(
        events, record.model_patch, recorded_test_flags(record.integrity), record.integrity.restored
    )
    tests_resolved = record.hidden_tests_passed
    resolved = counts_as_resolved(tests_resolved, integrity, settings.integrity)
    correctness = CorrectnessAxis(
        score=1.0 if resolved else 0.0,
        resolved=resolved,
        tests_resolved=tests_resolved,
        fail_to_pass=_fraction(record.fail_to_pass.passed, record.fail_to_pass.failed),
        pass_to_pass=_fraction(record.pass_to_pass.passed, record.pass_to_pass.failed),
        patch_applied=record.patch_applied,
    )
    if quality is None:
        quality = score_quality(
            record.model_patch,
            task.patch,
            base_file,
            forbidden=_forbidden(task, settings),
            weights=settings.quality,
            cache=quality_cache,
        )
    quality = broken_share(quality, len(record.pass_to_pass.passed), len(record.pass_to_pass.failed))
    limits = record.limits or _started_limits(events) or task.limits  # as the run set them
    efficiency = score_efficiency(record, limits, price, user_price)
    touched = changed_paths(record.model_patch) if record.model_patch.strip() else []
    interaction = score_interaction(record, events, touched, settings.interaction)
    worked = did_work(record)
    if not worked:
        quality, efficiency, interaction = (
            part.model_copy(update={"score": 0.0}) for part in (quality, efficiency, interaction)
        )
    figures = {"correctness": correctness, "quality": quality, "efficiency": efficiency, "interaction": interaction}
    for axis in AXES:
        if not axis.applies(record.produced):
            figures[axis.name] = figures[axis.name].model_copy(update={"score": None})
    if figures["interaction"].score is None:
        figures["interaction"] = figures["interaction"].model_copy(update={"counts": {}})
    axes = {name: part.score for name, part in figures.items()}
    axes[REVIEWER] = review.score if review is not None else None  # weighed only when the user gives it weight
    failed_integrity = settings.integrity == "fail" and integrity.verdict == "fail"
    return AttemptScores(
        run_id=record.run_id,
        task_id=record.task_id,
        model=record.model,
        sample=record.sample,
        tags=task.tags,
        commit_date=task.metadata.get(COMMIT_DATE),
        **figures,
        composite=0.0 if failed_integrity or not worked else composite(axes, settings.weights),
        weights=applied_weights(settings.weights, {name for name, score in axes.items() if score is not None}),
        did_work=worked,
        integrity=integrity,
        review=review,
    )
