"""Agents by name: `--agent NAME` is looked up here. The next agent is one row of AGENTS (an
installed agent: its `InstalledAgent` record in agent/installed.py and its recipe in
sandboxes/agents/); `command:TEMPLATE` (any other agent, run as a shell command in the sandbox) is
not a row but a prefix, the rest of the name being the command.

A factory builds the agent of one model for a run from the model's spec, its client, the
sandbox's output limit and the run's model proxy (None when the run has none); modules are
imported when an agent is asked for, so `evalkit --help` loads none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.errors import EvalkitError
from evalkit.lazy_table import Table, known, load

if TYPE_CHECKING:
    from evalkit.agent.protocol import Agent
    from evalkit.bridge.run_proxy import RunProxy
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import ModelSpec

DEFAULT_AGENT = "tool-loop"
COMMAND_PREFIX = "command:"
NAME_CHARS = 80  # of a `command:` agent's command kept in its recorded name

# name → (module, factory taking (spec, client, output_limit, proxy))
AGENTS: Table = {
    "tool-loop": ("evalkit.agent.agent_table", "_tool_loop"),
    "mini-swe-agent": ("evalkit.agent.installed", "MINI_SWE_AGENT"),
    "qwen-code": ("evalkit.agent.qwen_code", "QWEN_CODE"),
}


def command_template(agent: str) -> str | None:
    """The TEMPLATE of a `command:TEMPLATE` agent name (spaces around it dropped); None for any
    other name; a `command:` with nothing after it is one line saying what to give."""
    if not agent.startswith(COMMAND_PREFIX):
        return None
    template = agent.removeprefix(COMMAND_PREFIX).strip()
    if not template:
        raise EvalkitError(f"--agent {agent!r}: give a shell command after `command:`, e.g. 'command:my-agent --yes'")
    return template


def command_name(template: str) -> str:
    """The name a `command:` agent is recorded under: the prefix and `template`, its white space
    folded and cut at NAME_CHARS (the whole command is in the trajectory's `agent_command` event)."""
    folded = " ".join(template.split())
    return COMMAND_PREFIX + (folded if len(folded) <= NAME_CHARS else folded[: NAME_CHARS - 1] + "…")


def installed_layer(name: str) -> str | None:
    """The image layer installed agent `name` runs from (its own name); None for evalkit's tool
    loop and `command:` agents, which need none."""
    if command_template(name) is not None:
        return None
    from evalkit.agent.installed import InstalledAgent

    found = load(AGENTS, name, "agent")
    return found.name if isinstance(found, InstalledAgent) else None


def check_agent(name: str) -> str:
    """`name` if an agent has it (or it is `command:` and a command); else one line listing the
    agents there are."""
    if command_template(name) is not None:
        return name
    try:
        return known(AGENTS, name, "agent")
    except EvalkitError as exc:
        raise EvalkitError(f"{exc}, or command:TEMPLATE (a shell command run in the sandbox)") from None


def make_agent(
    name: str, spec: ModelSpec, client: ChatClient, output_limit: int, proxy: RunProxy | None = None
) -> Agent:
    """The agent `name` for the model of `spec`, reached through `client` (or, for an agent in the
    sandbox, through the run's `proxy`, which a `command:` agent needs)."""
    template = command_template(name)
    if template is None:
        return load(AGENTS, name, "agent")(spec, client, output_limit, proxy)
    if proxy is None:
        raise ValueError(f"agent {name!r} calls its model through the run's proxy: give make_agent one")
    from evalkit.agent.command_agent import CommandAgent

    return CommandAgent(template, client, proxy, output_limit, command_name(template))


def _tool_loop(spec: ModelSpec, client: ChatClient, output_limit: int, proxy: RunProxy | None = None) -> Agent:
    from evalkit.agent.loop import TurnPolicy
    from evalkit.agent.tool_loop import ToolLoopAgent

    return ToolLoopAgent(client, TurnPolicy(spec.on_text, spec.max_nudges, spec.tool_call_format), output_limit)
