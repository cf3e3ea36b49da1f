"""The agent seam: what evalkit asks of anything that works on a task in a sandbox.

evalkit's own tool-calling loop is one agent (`tool-loop`); a CLI agent installed in the sandbox
is another kind. An attempt gives the agent the task's prompt, an open sandbox, the attempt's
budgets, the trajectory to write to and a deadline; it gets back an `AgentOutcome` (stop reason,
usage, counters). An agent says which evidence it produces (token usage, evalkit's tool-call
events, a final message; the diff always): the axes that need what it does not produce are not
applicable to its attempts. Taking the diff, scoring it and recording the attempt stay with the harness, so
no agent can steer its own verdict.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Protocol

from evalkit.models.messages import Usage
from evalkit.records import StopReason
from evalkit.sandbox.egress import Egress
from evalkit.sandbox.protocol import Sandbox
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter
from evalkit.user.channel import UserChannel


@dataclass
class AgentOutcome:
    """How one agent's attempt ended and what it spent; the harness adds the diff and the verdict."""

    stop_reason: StopReason
    turns: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=lambda: Usage(reported=True))
    faults: Counter[str] = field(default_factory=Counter)  # ToolFault value → count
    retries: Counter[str] = field(default_factory=Counter)  # retry kind → count
    model_time_s: float = 0.0
    sandbox_time_s: float = 0.0
    final_message: str | None = None  # the submit summary, or the last plain answer
    error: str | None = None


class Agent(Protocol):
    """Works on one task in one sandbox until it is done or a budget runs out."""

    name: str  # recorded on every attempt (`agent` in results.jsonl)
    tools: list[dict]  # the tool schemas it offers a model, recorded in the trajectory ([] if none)
    # what it leaves for scoring (evalkit.axes.EVIDENCE), recorded per attempt: an axis needing
    # evidence it does not produce is "n/a" for its attempts rather than 0
    evidence: frozenset[str]
    # what its sandbox may reach: None, what the task's `network` says; "proxy", only the run's
    # model proxy (an agent evalkit did not write, calling its model through evalkit's proxy)
    egress: Egress | None
    # an installed agent (sandboxes/agents/<layer>/) whose files its sandbox's image gets, else None
    layer: str | None
    version: str | None  # recorded on every attempt (`agent_version`): an installed agent's pin, else None
    # it can put questions to a simulated user (evalkit's tool loop as the `ask_user` tool, agents in
    # a sandbox as the `ask-user` command); a `user` is given only then (absent: False, as for agents
    # written before users)
    asks_user: bool

    def run(
        self,
        prompt: str,
        sandbox: Sandbox,
        limits: Limits,
        trajectory: TrajectoryWriter,
        deadline: float,
        user: UserChannel | None = None,
    ) -> AgentOutcome:
        """Work on `prompt` in `sandbox` (with `user`, whom `ask_user` reaches); never raise for a
        fault of the model (put it in the outcome); raise only when the sandbox is lost
        (SandboxError) or on an interrupt."""
        ...
