"""Interaction: how the agent used its tools and how it ended, read from the trajectory.

score = max(0, 1 − Σ penalty × count), with these default penalties (override any of them in
evalkit.toml under [scoring.interaction]):

    malformed_call   0.10  tool-call arguments that are not JSON, or miss / mistype a field
    unknown_tool     0.10  a tool that does not exist
    failed_edit      0.05  an `edit` whose old_string was absent or ambiguous
    tool_error       0.05  any other failing tool call (missing file, unwritable path...)
    timeout          0.05  a command killed at its timeout
    repeated_call    0.05  a call identical (tool and arguments) to an earlier one in the attempt
    budget_overrun   0.30  the attempt ended on max_turns, max_tokens or wall_time
    no_final_message 0.20  no submit summary or closing message
    unspecific_final 0.10  a final message that names none of the files the diff touches
    no_tool_call     0.10  a reply with no tool call that the loop answered with a reminder (a nudge)
    text_tool_call   0.00  a tool call written into the reply's text (tool_call_format = "text"):
                           counted, not penalised unless configured
    bash_write       0.00  writing files through bash (`cat >`, `sed -i`, `tee`, `> file`) although
                           write_file / edit exist: off unless a suite asks for it

With a simulated user (`evalkit run --user simulated`), each question (the tool loop's `ask_user`,
or an agent in the sandbox running `ask-user`) is counted by the class the simulator gave it (the
row's `question_classes`), whether the rest is read from tool events or from the traffic:

    informative_question  0.00  the answer added intent the prompt lacked: asking was right
    redundant_question    0.05  the answer was already in the prompt or the code
    unanswered_question   0.02  the user did not know (or the simulator failed): a small cost of
                                a busy user's time
    over_budget_question  0.10  asked past the task's `max_questions`, left unanswered

An agent evalkit did not write (evidence `traffic`, no tool events) is scored from its recorded
traffic (evalkit/scoring/traffic.py): malformed calls, unknown tools, repeated calls, budget
overruns and its closing message are counted; the parts its own tools hide are listed in
`not_observed` and count nothing (not 0 occurrences: unknown).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping

from pydantic import BaseModel, ConfigDict, Field

from evalkit.axes import TOOL_CALLS
from evalkit.records import AttemptRecord
from evalkit.scoring.traffic import NOT_OBSERVED, read_traffic

OVERRUNS = frozenset({"max_turns", "max_tokens", "wall_time"})
_BASH_WRITE = re.compile(r"(\bcat\s*>|\bcat\s*<<|\bsed\s+-i|\btee\b|\bprintf\b.*>|\becho\b.*>|>\s*[\w./-]+\.\w+)")


class InteractionPenalties(BaseModel):
    model_config = ConfigDict(extra="forbid")

    malformed_call: float = Field(0.10, ge=0)
    unknown_tool: float = Field(0.10, ge=0)
    failed_edit: float = Field(0.05, ge=0)
    tool_error: float = Field(0.05, ge=0)
    timeout: float = Field(0.05, ge=0)
    repeated_call: float = Field(0.05, ge=0)
    budget_overrun: float = Field(0.30, ge=0)
    no_final_message: float = Field(0.20, ge=0)
    unspecific_final: float = Field(0.10, ge=0)
    no_tool_call: float = Field(0.10, ge=0)
    text_tool_call: float = Field(0.0, ge=0)
    bash_write: float = Field(0.0, ge=0)
    informative_question: float = Field(0.0, ge=0)
    redundant_question: float = Field(0.05, ge=0)
    unanswered_question: float = Field(0.02, ge=0)
    over_budget_question: float = Field(0.10, ge=0)


class InteractionScore(BaseModel):
    score: float | None  # None: not applicable (the agent leaves no tool-call events or no final message)
    counts: dict[str, int]  # one entry per penalty name ({} when not applicable)
    penalties: dict[str, float]  # the penalty per occurrence used
    final_message: str | None
    endpoint_retries: int  # the endpoint's fault, recorded but not penalised
    not_observed: list[str] = Field(default_factory=list)  # penalties the agent's evidence cannot show: not counted


def _calls(events: list[dict]) -> list[tuple[str, str]]:
    calls = []
    for event in events:
        message = event.get("message") if event.get("type") == "message" else None
        if isinstance(message, dict) and message.get("role") == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                calls.append((str(function.get("name")), str(function.get("arguments") or "")))
    return calls


# the row's `question_classes` keys → their penalty
QUESTION_PENALTIES = {
    "informative": "informative_question",
    "redundant": "redundant_question",
    "unanswered": "unanswered_question",
    "over_budget": "over_budget_question",
}


def question_counts(record: AttemptRecord) -> dict[str, int]:
    """The attempt's questions to the simulated user by penalty; 0 each on rows without a user.
    The same for every agent: the tool loop's `ask_user` and the `ask-user` command of an agent in
    the sandbox are tallied alike on the row."""
    classes = record.question_classes or {}
    return {penalty: int(classes.get(kind, 0)) for kind, penalty in QUESTION_PENALTIES.items()}


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (json.JSONDecodeError, TypeError):
        return arguments


def _mentions_a_touched_file(message: str, touched: list[str]) -> bool:
    return any(path in message or posixpath.basename(path) in message for path in touched)


def score_interaction(
    record: AttemptRecord,
    events: list[dict],
    touched: list[str],
    penalties: InteractionPenalties | None = None,
) -> InteractionScore:
    """`touched`: the files the attempt's diff changes."""
    penalties = penalties or InteractionPenalties()
    if TOOL_CALLS not in record.produced:
        return _score_traffic(record, events, touched, penalties)
    tool_events = [e for e in events if e.get("type") == "tool"]
    calls = _calls(events)
    seen: set[tuple[str, str]] = set()
    repeated = 0
    for name, arguments in calls:
        key = (name, _canonical(arguments))
        repeated += key in seen
        seen.add(key)
    failed_edits = sum(1 for e in tool_events if e.get("name") == "edit" and e.get("fault") == "tool_error")
    bash_writes = 0
    for name, arguments in calls:
        if name == "bash":
            try:
                command = json.loads(arguments).get("command", "")
            except (json.JSONDecodeError, AttributeError):
                continue
            bash_writes += bool(isinstance(command, str) and _BASH_WRITE.search(command))
    final = (record.final_message or "").strip()
    faults = record.faults
    counts = {
        "malformed_call": faults.get("malformed_json", 0) + faults.get("bad_arguments", 0),
        "unknown_tool": faults.get("unknown_tool", 0),
        "failed_edit": failed_edits,
        "tool_error": max(0, faults.get("tool_error", 0) - failed_edits),
        "timeout": faults.get("timeout", 0),
        "repeated_call": repeated,
        "budget_overrun": int(record.stop_reason in OVERRUNS),
        "no_final_message": int(not final),
        "unspecific_final": int(bool(final) and bool(touched) and not _mentions_a_touched_file(final, touched)),
        "no_tool_call": faults.get("no_tool_call", 0),
        "text_tool_call": faults.get("text_tool_call", 0),
        "bash_write": bash_writes,
        **question_counts(record),
    }
    weights: Mapping[str, float] = penalties.model_dump()
    score = max(0.0, 1.0 - sum(weights[k] * v for k, v in counts.items()))
    return InteractionScore(
        score=round(score, 4),
        counts=counts,
        penalties=dict(weights),
        final_message=record.final_message,
        endpoint_retries=sum(record.retries.values()),
    )


def _score_traffic(
    record: AttemptRecord, events: list[dict], touched: list[str], penalties: InteractionPenalties
) -> InteractionScore:
    """The penalties the recorded traffic shows; those it cannot are `not_observed`."""
    facts = read_traffic(events)
    canonical = [(name, _canonical(arguments)) for name, arguments in facts.calls]
    final = (facts.final_message or "").strip()
    counts = {
        "malformed_call": facts.malformed,
        "unknown_tool": facts.unknown_tool,
        "repeated_call": len(canonical) - len(set(canonical)),
        "budget_overrun": int(record.stop_reason in OVERRUNS),
        "no_final_message": int(not final),
        "unspecific_final": int(bool(final) and bool(touched) and not _mentions_a_touched_file(final, touched)),
        **(question_counts(record) if record.user else {}),  # without a user, the counts stay as they were
    }
    weights: Mapping[str, float] = penalties.model_dump()
    return InteractionScore(
        score=round(max(0.0, 1.0 - sum(weights[k] * v for k, v in counts.items())), 4),
        counts=counts,
        penalties=dict(weights),
        final_message=facts.final_message,
        endpoint_retries=sum(record.retries.values()),
        not_observed=list(NOT_OBSERVED),
    )
