"""Installed agents: a CLI agent evalkit did not write, installed into an image layer from a recipe
(`sandboxes/agents/<name>/`, see evalkit/sandbox/docker/agent_images.py) and run in the task's workspace.

An `InstalledAgent` is the typed record of one: its name (`--agent NAME`, a row of
`agent_table.AGENTS`), the command run by bash in /workspace, the variables it needs, the files it
writes outside the workspace that are kept beside the trajectory (its own logs), and the evidence it
leaves for scoring. Its version is the one its recipe pins (`ARG AGENT_VERSION=...`), read from the
recipe so the pin has one home, and recorded with every attempt. It runs through `CommandAgent`,
the path every agent in a sandbox takes: the run's model proxy, the budgets, the agent log, the
stop reasons, the kill at the wall time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from evalkit.agent.command_agent import CommandAgent
from evalkit.axes import DIFF, TRAFFIC, USAGE
from evalkit.sandbox.recipes import AGENT_ROOT, agent_recipe, recipe_version

if TYPE_CHECKING:
    from pathlib import Path

    from evalkit.bridge.run_proxy import RunProxy
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import ModelSpec

AGENT_TMP = "/tmp/evalkit-agent"  # where installed agents write their own files: never the workspace


@dataclass(frozen=True)
class InstalledAgent:
    """One installed agent; called as the agent table's factory, it is the agent of one model of a run."""

    name: str
    command: str  # run by bash in the workspace, as the sandbox user, with $EVALKIT_PROMPT & co set
    env: dict[str, str] = field(default_factory=dict)
    keep: tuple[str, ...] = ()  # files it writes in the sandbox, kept as `<attempt>.agent.<file name>`
    evidence: frozenset[str] = frozenset({DIFF, USAGE, TRAFFIC})  # its own tools: no evalkit tool events

    @property
    def recipe(self) -> Path:
        return agent_recipe(self.name)

    @property
    def folder(self) -> str:
        """Where its files are in the sandbox."""
        return f"{AGENT_ROOT}/{self.name}"

    @property
    def version(self) -> str:
        return recipe_version(self.recipe)

    def __call__(
        self, spec: ModelSpec, client: ChatClient, output_limit: int, proxy: RunProxy | None = None
    ) -> CommandAgent:
        if proxy is None:
            raise ValueError(f"agent {self.name!r} calls its model through the run's proxy: give it one")
        return CommandAgent(
            self.command, client, proxy, output_limit, self.name, evidence=self.evidence,
            env=dict(self.env), layer=self.name, version=self.version, keep=self.keep,
        )  # fmt: skip


MINI_SWE_AGENT = InstalledAgent(
    "mini-swe-agent",
    f"{AGENT_ROOT}/mini-swe-agent/runtime/bin/python3 {AGENT_ROOT}/mini-swe-agent/run_mswea.py",
    env={
        "MSWEA_SILENT_STARTUP": "1",
        "MSWEA_GLOBAL_CONFIG_DIR": f"{AGENT_TMP}/mswea-config",
        "MSWEA_TRAJECTORY": f"{AGENT_TMP}/mini-swe-agent.traj.json",
        "MSWEA_COST_TRACKING": "ignore_errors",
        "MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT": "1",  # the proxy's client retries the real endpoint
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no fetch of litellm's price list (no network)
        "PYTHONDONTWRITEBYTECODE": "1",
    },
    keep=(f"{AGENT_TMP}/mini-swe-agent.traj.json",),
)
