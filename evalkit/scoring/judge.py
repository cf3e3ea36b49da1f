"""An optional reviewer model: any OpenAI-compatible endpoint grades a diff against a rubric and
answers through a `verdict` tool call, so the answer is structured. Its score is recorded on its
own and never mixed into the composite: a model judging models is an opinion, not a measurement."""

from __future__ import annotations

import json
import time

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.models.client import ChatClient, EndpointError

DEFAULT_RUBRIC = """\
Judge the change as a careful reviewer of this repository would:
- Does it do what the request asks, without unrelated changes?
- Is it idiomatic for the codebase, readable, and free of debugging leftovers and dead code?
- Are edge cases and errors handled; are new public functions documented where the code base does?
- Would you merge it as is?"""

SYSTEM = "You review code changes. Answer only by calling the `verdict` tool."
VERDICT_TOOL = {
    "type": "function",
    "function": {
        "name": "verdict",
        "description": "Your review of the change.",
        "parameters": {
            "type": "object",
            "properties": {
                "score": {"type": "integer", "minimum": 0, "maximum": 10, "description": "0 worst, 10 merge as is."},
                "summary": {"type": "string"},
                "issues": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["score", "summary"],
            "additionalProperties": False,
        },
    },
}
MAX_DIFF_CHARS = 60_000


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    score: int = Field(..., ge=0, le=10)
    summary: str
    issues: list[str] = Field(default_factory=list)


class JudgeVerdict(BaseModel):
    judge: str
    score: float | None  # 0..1 (the 0–10 answer / 10); None when the judge gave no usable verdict
    summary: str = ""
    issues: list[str] = Field(default_factory=list)
    rubric: str = ""
    error: str | None = None


def judge_diff(client: ChatClient, prompt: str, diff: str, rubric: str | None = None) -> JudgeVerdict:
    rubric = rubric or DEFAULT_RUBRIC
    name = client.spec.name
    if not diff.strip():
        return JudgeVerdict(judge=name, score=0.0, summary="No change was made.", rubric=rubric)
    shown = diff if len(diff) <= MAX_DIFF_CHARS else diff[:MAX_DIFF_CHARS] + "\n[... diff truncated ...]\n"
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Request:\n{prompt}\n\nRubric:\n{rubric}\n\nThe change:\n```diff\n{shown}```"},
    ]
    try:
        reply = client.complete(messages, [VERDICT_TOOL], time.monotonic() + client.spec.request_timeout_s * 3)
    except EndpointError as exc:
        return JudgeVerdict(judge=name, score=None, rubric=rubric, error=str(exc))
    calls = [c for c in reply.message.get("tool_calls") or [] if c["function"]["name"] == "verdict"]
    if not calls:
        return JudgeVerdict(judge=name, score=None, rubric=rubric, error="the judge did not call `verdict`")
    try:
        verdict = _Verdict.model_validate(json.loads(calls[0]["function"]["arguments"]))
    except (json.JSONDecodeError, ValidationError) as exc:
        return JudgeVerdict(judge=name, score=None, rubric=rubric, error=f"unusable verdict: {str(exc)[:200]}")
    return JudgeVerdict(
        judge=name, score=verdict.score / 10, summary=verdict.summary, issues=verdict.issues, rubric=rubric
    )
