"""`tool-loop`: evalkit's own agent, the loop of loop.py driving a model through evalkit's tools."""

from __future__ import annotations

from dataclasses import dataclass, field

from evalkit.agent.loop import TurnPolicy, run_agent
from evalkit.agent.protocol import AgentOutcome
from evalkit.agent.tools import TOOL_SCHEMAS, ToolBox
from evalkit.axes import EVIDENCE
from evalkit.models.client import ChatClient
from evalkit.sandbox.egress import Egress
from evalkit.sandbox.protocol import Sandbox
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter
from evalkit.user.channel import UserChannel


@dataclass
class ToolLoopAgent:
    """A model behind `client` calls bash/read_file/write_file/edit/search/submit in the sandbox (and
    `ask_user`, answered by the attempt's simulated user, when it has one)."""

    client: ChatClient
    policy: TurnPolicy
    output_limit: int  # bytes of a command's output shown to the model (head + tail)
    name: str = "tool-loop"
    tools: list[dict] = field(default_factory=lambda: list(TOOL_SCHEMAS))
    evidence: frozenset[str] = EVIDENCE  # usage, tool-call events and a final message, besides the diff
    egress: Egress | None = None  # the task's own network setting: the loop runs on the host
    layer: str | None = None  # nothing installed: the loop runs on the host
    version: str | None = None  # evalkit's own (its version is the package's)
    asks_user: bool = True  # offers `ask_user` when the attempt has a simulated user

    def run(
        self,
        prompt: str,
        sandbox: Sandbox,
        limits: Limits,
        trajectory: TrajectoryWriter,
        deadline: float,
        user: UserChannel | None = None,
    ) -> AgentOutcome:
        toolbox = ToolBox(sandbox, limits.command_timeout_s, self.output_limit)
        return run_agent(prompt, toolbox, self.client, limits, trajectory, deadline, self.policy, user)
