"""The rubric a reviewer answers and the `verdict` tool it answers through: a structured call, so
that an answer is either in schema (recorded) or not (recorded as the error it is)."""

from __future__ import annotations

import json

from pydantic import ValidationError

from evalkit.review.verdict import RubricAnswers

VERDICT = "verdict"
DEFAULT_RUBRIC = """\
Review the candidate change as a careful maintainer of this repository would:
- does_what_asked: does it do what the request asks (the reference change shows one way)?
- in_scope: does it stay within the request, without unrelated edits, reformatting or churn?
- readable: is it readable and idiomatic for this code base (names, line length, structure)?
- leftovers: list debugging output, dead or duplicated code, commented-out code, hack markers,
  suppressed warnings or placeholders it leaves behind (empty when none).
- would_merge: would you merge it as is?
- score: your overall grade, 0 (reject) to 10 (merge as is).
- lines: the lines that made you lower a grade (path, line, why).
Grade the candidate, not the reference: a candidate may differ from the reference and be as good."""

_GRADE = {"type": "integer", "minimum": 0, "maximum": 10}
VERDICT_TOOL = {
    "type": "function",
    "function": {
        "name": VERDICT,
        "description": "Your review of the candidate change; call it once, when you are done reading.",
        "parameters": {
            "type": "object",
            "properties": {
                "does_what_asked": {**_GRADE, "description": "0 not at all, 10 fully."},
                "in_scope": {**_GRADE, "description": "0 mostly unrelated churn, 10 only what was asked."},
                "readable": {**_GRADE, "description": "0 unreadable, 10 idiomatic and clear."},
                "leftovers": {"type": "array", "items": {"type": "string"}},
                "would_merge": {"type": "boolean"},
                "score": {**_GRADE, "description": "Overall: 0 reject, 10 merge as is."},
                "lines": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "path": {"type": "string"},
                            "line": {"type": "integer"},
                            "why": {"type": "string"},
                        },
                        "required": ["path", "why"],
                    },
                },
                "summary": {"type": "string"},
            },
            "required": ["does_what_asked", "in_scope", "readable", "would_merge", "score", "summary"],
        },
    },
}


def parse_answers(arguments: object) -> RubricAnswers | str:
    """The rubric's answers from a `verdict` call's arguments, or why they are out of schema."""
    try:
        data = json.loads(arguments) if isinstance(arguments, str) else arguments
        return RubricAnswers.model_validate(data)
    except json.JSONDecodeError as exc:
        return f"the verdict's arguments are not JSON ({exc.msg})"
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "arguments"
        return f"the verdict is out of schema: {where}: {first['msg']}"
