"""Agents by name: `--agent NAME` is looked up here. The next agent is one row of AGENTS.

A factory builds the agent of one model for a run from the model's spec, its client and the
sandbox's output limit; modules are imported when an agent is asked for, so `evalkit --help`
loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.lazy_table import Table, known, load

if TYPE_CHECKING:
    from evalkit.agent.protocol import Agent
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import ModelSpec

DEFAULT_AGENT = "tool-loop"

# name → (module, factory function taking (spec, client, output_limit))
AGENTS: Table = {
    "tool-loop": ("evalkit.agent.registry", "_tool_loop"),
}


def check_agent(name: str) -> str:
    """`name` if an agent has it; else one line listing the agents there are."""
    return known(AGENTS, name, "agent")


def make_agent(name: str, spec: ModelSpec, client: ChatClient, output_limit: int) -> Agent:
    """The agent `name` for the model of `spec`, reached through `client`."""
    return load(AGENTS, name, "agent")(spec, client, output_limit)


def _tool_loop(spec: ModelSpec, client: ChatClient, output_limit: int) -> Agent:
    from evalkit.agent.loop import TurnPolicy
    from evalkit.agent.tool_loop import ToolLoopAgent

    return ToolLoopAgent(client, TurnPolicy(spec.on_text, spec.max_nudges, spec.tool_call_format), output_limit)
