"""A review: the reviewer model reads the request, the candidate's diff and the reference's, may
read and search the three trees (agentic mode), and answers the rubric by calling `verdict`.
The no-tools mode is one request offering `verdict` alone (what `--judge` was).

Nothing here raises for the reviewer's sake: an endpoint error, a reviewer that never calls
`verdict` within its turns, or one whose every answer is out of schema is a verdict with the error
(an answer out of schema is told to the reviewer, which may answer again while turns are left;
the last request of an agentic review offers `verdict` alone)."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

from evalkit.agent.text_calls import parse_text_tool_calls
from evalkit.models.client import ChatClient, EndpointError, Usage, tool_message
from evalkit.review.review_tools import READING_TOOL_NAMES, READING_TOOLS, ReviewTools
from evalkit.review.rubric import DEFAULT_RUBRIC, VERDICT, VERDICT_TOOL, parse_answers
from evalkit.review.verdict import ReviewMode, ReviewVerdict, RubricAnswers
from evalkit.trajectory import TrajectoryWriter

MAX_CANDIDATE_CHARS = 40_000
MAX_REFERENCE_CHARS = 20_000
DEFAULT_MAX_TURNS = 12
MAX_NUDGES = 2  # plain-text replies reminded to call `verdict` before the review gives up
REVIEW_WALL_S = 900.0

SYSTEM = (
    "You review code changes for the maintainers of a repository. You are shown a request, the "
    "candidate change made for it and the reference change a maintainer merged. {reading}"
    "Answer only by calling the `verdict` tool, once."
)
READING = (
    "You may read and search three trees of the repository with the tools: `base` (before any change), "
    "`candidate` (with the candidate change applied) and `reference` (with the reference change applied). "
    "Read what you need to judge the candidate, then call `verdict`. "
)
NUDGE = "Answer by calling the `verdict` tool with your review of the candidate change."
LAST_TURN = "This is your last turn: call `verdict` now with your review of the candidate change."


@dataclass(frozen=True)
class ReviewCase:
    """What one review is about."""

    prompt: str
    candidate: str  # the candidate's diff against the base
    reference: str  # the reference's diff (the task's patch)
    rubric: str | None = None  # the task's own, else DEFAULT_RUBRIC
    candidate_applied: bool = True


def _shown(diff: str, limit: int) -> str:
    return diff if len(diff) <= limit else diff[:limit] + "\n[... diff cut: read the files for the rest ...]\n"


def opening(case: ReviewCase, mode: ReviewMode) -> list[dict]:
    """The system and user messages a review starts from."""
    rubric = case.rubric or DEFAULT_RUBRIC
    applied = "" if case.candidate_applied else "\n(The candidate change does not apply to the base.)\n"
    user = (
        f"Request:\n{case.prompt}\n\nRubric:\n{rubric}\n\nCandidate change:{applied}\n```diff\n"
        f"{_shown(case.candidate, MAX_CANDIDATE_CHARS)}```\n\nReference change:\n```diff\n"
        f"{_shown(case.reference, MAX_REFERENCE_CHARS)}```"
    )
    system = SYSTEM.format(reading=READING if mode == "agentic" else "")
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@dataclass
class _Tally:
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    tool_calls: int = 0
    error: str | None = None


def _issues(answers: RubricAnswers) -> list[str]:
    blamed = [f"{b.path}:{b.line}: {b.why}" if b.line else f"{b.path}: {b.why}" for b in answers.lines]
    return [*answers.leftovers, *blamed]


@dataclass
class Reviewer:
    """One reviewer model and how it reviews: `mode` agentic (reading tools) or no-tools, at most
    `max_turns` requests per review; `price`, USD per million tokens (None: cost unknown)."""

    client: ChatClient
    mode: ReviewMode = "agentic"
    max_turns: int = DEFAULT_MAX_TURNS
    price: object | None = None  # scoring.prices.Price (its `cost`); kept loose to import downward only

    @property
    def name(self) -> str:
        return self.client.spec.name

    def review(
        self, case: ReviewCase, tools: ReviewTools | None = None, transcript: TrajectoryWriter | None = None
    ) -> ReviewVerdict:
        """The verdict on `case`; `tools` reads its trees (agentic mode only), `transcript` gets
        every message and model call."""
        rubric = case.rubric or DEFAULT_RUBRIC
        if not case.candidate.strip():
            return ReviewVerdict(
                reviewer=self.name,
                mode=self.mode,
                score=0.0,
                summary="No change was made.",
                rubric=rubric,
                cost_usd=None if self.price is None else 0.0,  # nothing was asked
            )
        agentic = self.mode == "agentic" and tools is not None
        offered = [*READING_TOOLS, VERDICT_TOOL] if agentic else [VERDICT_TOOL]
        names = frozenset(t["function"]["name"] for t in offered)
        messages = opening(case, "agentic" if agentic else "no-tools")
        write = transcript.message if transcript else (lambda message: None)
        for message in messages:
            write(message)
        tally = _Tally()
        answers = self._converse(messages, offered, names, tools if agentic else None, tally, transcript)
        if transcript:
            transcript.event("stop", stop_reason="verdict" if answers else "no_verdict", error=tally.error)
        usage = tally.usage
        cost = (
            self.price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens) if self.price else None
        )
        common = dict(
            reviewer=self.name,
            mode=self.mode,
            rubric=rubric,
            turns=tally.turns,
            tool_calls=tally.tool_calls,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cost_usd=None if cost is None else round(cost, 6),
        )
        if answers is None:
            return ReviewVerdict(score=None, error=tally.error, **common)
        return ReviewVerdict(
            score=answers.score / 10, answers=answers, summary=answers.summary, issues=_issues(answers), **common
        )

    def _converse(
        self,
        messages: list[dict],
        offered: list[dict],
        names: frozenset[str],
        tools: ReviewTools | None,
        tally: _Tally,
        transcript: TrajectoryWriter | None,
    ) -> RubricAnswers | None:
        deadline = time.monotonic() + REVIEW_WALL_S
        nudges = 0
        max_turns = self.max_turns if tools is not None else 1
        while tally.turns < max_turns:
            tally.turns += 1
            last = tally.turns == max_turns and len(offered) > 1
            if last:  # the reading is over: the last request offers `verdict` alone, and says so
                messages.append({"role": "user", "content": LAST_TURN})
                if transcript:
                    transcript.message(messages[-1])
            try:
                reply = self.client.complete(messages, [VERDICT_TOOL] if last else offered, deadline)
            except EndpointError as exc:
                tally.error = f"endpoint error ({exc.kind}): {exc}"
                if transcript:
                    transcript.event("model_call", turn=tally.turns, error=tally.error)
                return None
            tally.usage = tally.usage + reply.usage
            if transcript:
                transcript.event(
                    "model_call",
                    turn=tally.turns,
                    latency_s=round(reply.latency_s, 3),
                    usage=reply.usage.as_dict(),
                    finish_reason=reply.finish_reason,
                    retries=[r.kind for r in reply.retries],
                )
            message = dict(reply.message)
            calls = message.get("tool_calls") or []
            if not calls and self.client.spec.tool_call_format == "text":
                calls = parse_text_tool_calls(message.get("content"), names, tally.turns)
                if calls:
                    message["tool_calls"] = calls
            messages.append(message)
            if transcript:
                transcript.message(message)
            if not calls:
                tally.error = "the reviewer answered in plain text and never called `verdict`"
                if nudges >= MAX_NUDGES:
                    return None
                nudges += 1
                messages.append({"role": "user", "content": NUDGE})
                if transcript:
                    transcript.message(messages[-1])
                continue
            for call in calls:
                function = call.get("function") or {}
                name, arguments = function.get("name"), function.get("arguments")
                if name == VERDICT:
                    answers = parse_answers(arguments)
                    if isinstance(answers, RubricAnswers):
                        return answers
                    tally.error = answers
                    content = f"error: {answers}. Call `verdict` again with every required field."
                elif name in READING_TOOL_NAMES and tools is not None:
                    tally.tool_calls += 1
                    content = self._read(tools, name, arguments)
                else:
                    content = f"error: no tool named {name!r}; the tools are {', '.join(sorted(names))}"
                messages.append(tool_message(call.get("id") or "", name or "", content))
                if transcript:
                    transcript.message(messages[-1])
                    transcript.event("tool", call_id=call.get("id"), name=name)
        tally.error = tally.error or f"no verdict within {max_turns} turn{'s' if max_turns != 1 else ''}"
        return None

    @staticmethod
    def _read(tools: ReviewTools, name: str, arguments: object) -> str:
        try:
            parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
        except json.JSONDecodeError as exc:
            return f"error: the arguments are not JSON ({exc.msg})"
        if not isinstance(parsed, dict):
            return "error: the arguments must be a JSON object"
        return tools.call(name, parsed)
