"""The records every layer shares: why an attempt stopped, what went wrong with a tool call, a
test group's outcome, and the attempt itself (one row of results.jsonl).

They sit just above tasks (a record carries its task's limits) so that the agent, the test runs,
the run folder and the scores all speak of one `AttemptRecord` and one `StopReason` without
importing one another.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum

from pydantic import BaseModel, Field, field_serializer

from evalkit.axes import EVIDENCE
from evalkit.diffs import readable
from evalkit.integrity import IntegrityReport
from evalkit.tasks.model import Limits


class StopReason(StrEnum):
    """Why an attempt ended: the closed set recorded on every attempt."""

    SUBMITTED = "submitted"  # the model called `submit`
    NO_TOOL_CALL = "no_tool_call"  # the model answered without calling a tool
    MAX_TURNS = "max_turns"
    MAX_TOKENS = "max_tokens"  # prompt + completion tokens over the attempt
    WALL_TIME = "wall_time"
    CONTEXT_OVERFLOW = "context_overflow"  # the endpoint refused the conversation as too long
    ENDPOINT_ERROR = "endpoint_error"  # no usable answer after retries, or a non-retryable HTTP error
    SANDBOX_ERROR = "sandbox_error"  # the harness lost the sandbox; not the model's fault
    ENVIRONMENT_ERROR = "environment_error"  # the task's hidden tests do not run here, whatever the change
    # an agent run as a command (`command:`, installed agents) exited non-zero on its own: it crashed.
    # The agent is what is evaluated, so this is scored like any other ending, not left out as an error.
    AGENT_ERROR = "agent_error"


class ToolFault(StrEnum):
    """What went wrong with one tool call; counted for the interaction score."""

    MALFORMED_JSON = "malformed_json"
    UNKNOWN_TOOL = "unknown_tool"
    BAD_ARGUMENTS = "bad_arguments"
    TOOL_ERROR = "tool_error"  # the call was well-formed but the tool failed (file missing, edit not found…)
    TIMEOUT = "timeout"  # the command was killed at its timeout


class TestGroupResult(BaseModel):
    """Outcome of one listed group (FAIL_TO_PASS or PASS_TO_PASS)."""

    __test__ = False  # not a pytest class

    passed: list[str]
    failed: list[str]  # failed, errored, skipped or missing

    @property
    def total(self) -> int:
        return len(self.passed) + len(self.failed)

    @property
    def fraction(self) -> float:
        return len(self.passed) / self.total if self.total else 1.0


# The endpoint or the harness failed, not the model: such attempts are errors, never scores.
ERROR_STOP_REASONS = frozenset(
    {StopReason.ENDPOINT_ERROR.value, StopReason.SANDBOX_ERROR.value, StopReason.ENVIRONMENT_ERROR.value}
)
# retried by every resume; endpoint errors only with --retry-errors
RERUN_STOP_REASONS = frozenset({StopReason.SANDBOX_ERROR.value})


SIMULATED = "simulated"  # AttemptRecord.user of an attempt whose agent could ask a simulated user


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class AttemptRecord(BaseModel):
    """One finished attempt of one model on one task (one row of results.jsonl)."""

    run_id: str
    task_id: str
    model: str
    sample: int
    agent: str = "tool-loop"  # what worked on the task (--agent); rows from before agents were the tool loop
    agent_version: str | None = None  # an installed agent's pinned version (None: evalkit's own or a command)
    node: str | None = None  # the cluster node it ran on (--executor ray: host/node id); None: this machine
    limits: Limits | None = None  # the budgets the attempt ran under (None: a row from before they were kept)
    # what the agent left for scoring (evalkit.axes.EVIDENCE); None: a row from before agents declared it,
    # all of it (those rows are the tool loop's)
    evidence: list[str] | None = None
    resolved: bool  # the verdict: the hidden tests passed and (under integrity = "fail") no failing flag
    tests_resolved: bool | None = None  # what the hidden tests alone said (None: a row from before integrity)
    stop_reason: str
    error: str | None = None
    usage: dict = Field(default_factory=dict)  # prompt/completion/cached/total tokens, reported
    turns: int = 0
    tool_calls: int = 0
    faults: dict[str, int] = Field(default_factory=dict)  # malformed_json, unknown_tool, bad_arguments…
    retries: dict[str, int] = Field(default_factory=dict)  # rate_limit, server_error, timeout…
    duration_s: float = 0.0  # the whole attempt: sandbox start to verdict
    agent_s: float = 0.0
    model_time_s: float = 0.0
    sandbox_time_s: float = 0.0
    test_time_s: float = 0.0
    sampling: dict = Field(default_factory=dict)
    endpoint: dict = Field(default_factory=dict)
    final_message: str | None = None
    model_patch: str = ""  # as git wrote it; a byte that is not UTF-8 shows as U+FFFD in the JSON row
    patch_applied: bool = False
    fail_to_pass: TestGroupResult = Field(default_factory=lambda: TestGroupResult(passed=[], failed=[]))
    pass_to_pass: TestGroupResult = Field(default_factory=lambda: TestGroupResult(passed=[], failed=[]))
    integrity: IntegrityReport = Field(default_factory=IntegrityReport)
    trajectory: str = ""  # relative to the run folder
    started_at: str = ""
    finished_at: str = ""
    # "approximate: Python 3.6 wanted, 3.9 used (bullseye)" when the task's SWE-bench environment
    # could not be matched offline; None for an exact environment or a task without one
    environment: str | None = None
    # the simulated user (--user simulated, or the task's [user] mode): "simulated" when the agent was
    # offered `ask_user`, else None (and in rows from before users); the rest is 0/empty then
    user: str | None = None
    user_model: str | None = None  # who answered: oracle-user or a model name
    questions: int = 0  # `ask_user` calls with a question, over budget included
    question_classes: dict[str, int] = Field(default_factory=dict)  # informative/redundant/unanswered/over_budget
    user_leaks: int = 0  # identifiers and lines of the reference change redacted from answers
    user_usage: dict = Field(default_factory=dict)  # the simulator's tokens, like `usage`; never the agent's
    user_time_s: float = 0.0  # the simulator's answering time

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.task_id, self.model, self.sample)

    @property
    def errored(self) -> bool:
        """The endpoint or the harness failed: counted as an error, left out of every score."""
        return self.stop_reason in ERROR_STOP_REASONS

    @property
    def produced(self) -> frozenset[str]:
        """The evidence this attempt produced: the axes that need more are not applicable to it."""
        return EVIDENCE if self.evidence is None else frozenset(self.evidence)

    @property
    def hidden_tests_passed(self) -> bool:
        return self.resolved if self.tests_resolved is None else self.tests_resolved

    @field_serializer("model_patch", when_used="json")
    def _patch_as_json(self, patch: str) -> str:
        """JSON holds text only: the verdict was reached on the diff's exact bytes; the row keeps a
        readable copy."""
        return readable(patch)
