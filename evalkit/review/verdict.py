"""What a reviewer said about one change: the rubric's answers, the lines it blames, and what the
review cost. A failed review (an endpoint error, no answer, an answer out of schema) is a verdict
with `score` None and `error` set: recorded, never fatal to the scoring around it."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

ReviewMode = Literal["agentic", "no-tools"]


class BlamedLine(BaseModel):
    """A line the reviewer points at, in the candidate's tree (the base's for a removed line)."""

    model_config = ConfigDict(extra="ignore")

    path: str
    line: int | None = None
    why: str = ""


class RubricAnswers(BaseModel):
    """The rubric, answered: each criterion 0 (worst) to 10, and the merge decision."""

    model_config = ConfigDict(extra="ignore")

    does_what_asked: int = Field(..., ge=0, le=10)
    in_scope: int = Field(..., ge=0, le=10)
    readable: int = Field(..., ge=0, le=10)
    leftovers: list[str] = Field(default_factory=list)  # debugging leftovers, dead code, markers found
    would_merge: bool
    score: int = Field(..., ge=0, le=10)  # the overall grade
    lines: list[BlamedLine] = Field(default_factory=list)
    summary: str = ""


class ReviewVerdict(BaseModel):
    """One review, as scores.jsonl keeps it beside the deterministic axes (rows written before the
    reviewer existed name it `judge` and carry summary/issues only)."""

    model_config = ConfigDict(populate_by_name=True)

    reviewer: str = Field(validation_alias=AliasChoices("reviewer", "judge"))
    mode: ReviewMode = "no-tools"
    score: float | None  # 0..1 (the overall 0-10 grade / 10); None: no usable answer
    answers: RubricAnswers | None = None
    summary: str = ""
    issues: list[str] = Field(default_factory=list)
    rubric: str = ""
    error: str | None = None
    candidate_applied: bool = True  # False: the change did not apply to the base (the reviewer was told)
    turns: int = 0  # requests sent
    tool_calls: int = 0  # reading tools the reviewer called
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None  # None: the reviewer's model has no price
    transcript: str | None = None  # the review's events, relative to the run folder
