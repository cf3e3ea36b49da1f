"""What `evalkit compare` found, as data: each axis's test and verdict, the flips, each paired
task's outcome and the integrity section. `Comparison.model_dump()` is the JSON form; the
outputs (`output`) and the exit code read only this."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, computed_field, model_serializer

from evalkit.cutoff import CutoffSplit
from evalkit.report.compare.integrity import IntegrityComparison

AxisVerdict = Literal["regression", "small_drop", "improvement", "no_change"]


class AxisResult(BaseModel):
    """One axis, base against new, over the paired tasks."""

    axis: str
    test: Literal["mcnemar-exact", "paired-bootstrap"]
    tasks: int  # tasks with a value on both sides
    base: float  # mean over tasks, samples averaged per task first
    new: float
    diff: float  # new − base
    ci_low: float  # paired bootstrap percentile interval of diff, level 1 − alpha
    ci_high: float
    p_worse: float  # one-sided p-value of "new is worse"
    p_better: float  # one-sided p-value of "new is better"
    verdict: AxisVerdict
    deciding: bool
    base_only: int | None = None  # resolved only: attempt pairs resolved in base and not in new
    new_only: int | None = None  # ... and the reverse

    @computed_field
    @property
    def regression(self) -> bool:
        return self.verdict == "regression"


class Flip(BaseModel):
    task_id: str
    sample: int


class TaskOutcome(BaseModel):
    """One paired task's resolved rate on both sides (the JUnit test case of that task)."""

    task_id: str
    samples: int
    base_resolved: float
    new_resolved: float

    @computed_field
    @property
    def dropped(self) -> bool:
        return self.new_resolved < self.base_resolved


class Comparison(BaseModel):
    """Everything `evalkit compare` found; `model_dump()` is its JSON form."""

    suite: str
    base_run: str
    new_run: str
    base_model: str
    new_model: str
    base_agent: str = "tool-loop"  # each run's --agent (run.json): runs may differ by agent alone
    new_agent: str = "tool-loop"
    base_user: str | None = None  # each run's simulated user ("simulated (oracle-user)"), None: no user
    new_user: str | None = None
    pairs: int  # (task, sample) pairs compared
    tasks: int
    unpaired_base: int  # attempts of the base with no partner in the new run, ignored
    unpaired_new: int
    harness_failures: int  # pairs left out: an endpoint_error or sandbox_error on either side
    tasks_only_base: list[str] = Field(default_factory=list)  # loaded by the base run only: left out (--allow-subset)
    tasks_only_new: list[str] = Field(default_factory=list)  # loaded by the new run only: left out (--allow-subset)
    max_drop: float
    alpha: float
    resamples: int
    seed: int
    deciding_axes: list[str]
    axes: list[AxisResult]
    lost: list[Flip]  # resolved in base, unresolved in new
    gained: list[Flip]  # unresolved in base, resolved in new
    task_outcomes: list[TaskOutcome]
    integrity: IntegrityComparison = Field(default_factory=IntegrityComparison)  # informs; never the exit code
    notes: list[str] = Field(default_factory=list)
    # each side's resolved rate over the paired tasks after its model's knowledge cutoff (`cutoff`);
    # None: no cutoff, and then absent from the JSON
    base_after_cutoff: CutoffSplit | None = None
    new_after_cutoff: CutoffSplit | None = None

    @model_serializer(mode="wrap")
    def _cutoffs_when_known(self, handler: SerializerFunctionWrapHandler) -> dict:
        unknown = {name for name in ("base_after_cutoff", "new_after_cutoff") if getattr(self, name) is None}
        return {k: v for k, v in handler(self).items() if k not in unknown}

    @computed_field
    @property
    def regressions(self) -> list[str]:
        """The deciding axes that regressed."""
        return [a.axis for a in self.axes if a.deciding and a.regression]

    @computed_field
    @property
    def regression(self) -> bool:
        return bool(self.regressions)

    @property
    def exit_code(self) -> int:
        return 1 if self.regression else 0

    def axis(self, name: str) -> AxisResult:
        return next(a for a in self.axes if a.axis == name)
