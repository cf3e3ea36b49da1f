"""Where an attempt is set up, from the run's `AttemptSettings`, whether it runs in the local pool
(`orchestrate.run_locally`, once for the run's attempts) or on a cluster node (`NodeJob`, once
for the node's one attempt): the agent of each model (reaching it through its client, or through
the run's model proxy for an agent in the sandbox), an installed agent's layer made ready, the
proxy started before any sandbox is made, the simulated user, and per attempt the task's budgets
as the settings override them and the channel to its user.

What differs between the two stays with the caller: the model clients (a local run serves the
built-in models in-process, a node reaches the driver's with the run's token), the engine watch
(local), and the run folder (a node writes into a temporary one the driver copies from)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from evalkit.agent.agent_table import make_agent
from evalkit.agent.protocol import Agent
from evalkit.bridge.run_proxy import RunProxy
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.records import AttemptRecord
from evalkit.runs.attempt import AttemptKey, attempt_sandboxes, run_attempt
from evalkit.runs.settings import AttemptSettings
from evalkit.runs.store import RunStore
from evalkit.runs.user_setup import user_channel
from evalkit.sandbox.protocol import AgentLayers, DistributesImages, SandboxBackend, SandboxRequest, require
from evalkit.tasks.model import Limits, Task
from evalkit.user.protocol import UserSimulator


@dataclass(frozen=True)
class AttemptSetup:
    """What a run's attempts on one backend share once set up: `run(key)` runs one."""

    settings: AttemptSettings
    run_id: str
    backend: SandboxBackend
    store: RunStore
    specs: dict[str, ModelSpec]
    agents: dict[str, Agent]
    simulator: UserSimulator | None  # None: no task of these attempts has a user

    def limits(self, task: Task) -> Limits:
        """The task's budgets as the run overrides them."""
        return self.settings.limits.apply(task.limits)

    def sandboxes(self, key: AttemptKey) -> SandboxRequest:
        """The sandboxes `run(key)` opens, for the backend's pool."""
        agent = self.agents[key.model]
        return attempt_sandboxes(key, self.limits(key.task), agent.egress, agent.layer)

    def run(self, key: AttemptKey) -> AttemptRecord:
        """Run and score one attempt (its trajectory under `store`)."""
        agent, limits = self.agents[key.model], self.limits(key.task)
        channel = user_channel(self.settings.user, self.simulator, agent, key.task, limits)
        return run_attempt(
            key, self.specs[key.model], agent, self.backend, self.store, self.run_id, limits,
            self.settings.integrity_policy, channel,
        )  # fmt: skip


@contextmanager
def set_up_attempts(
    settings: AttemptSettings,
    run_id: str,
    backend: SandboxBackend,
    store: RunStore,
    specs: list[ModelSpec],
    clients: dict[str, ChatClient],
    tasks: list[Task],
    *,
    agent_image: str | None = None,
    registry: str | None = None,
) -> Iterator[AttemptSetup]:
    """The attempts of `tasks` with the models of `specs` (each reached through its client in
    `clients`), set up on `backend` while the block runs: the model proxy and the simulated user
    are closed with it. An installed agent's layer is built once here (a failure stops here), or,
    given the image the driver pushed to `registry` (`agent_image`), pulled."""
    with RunProxy(backend) as proxy, settings.user.serving(tasks) as simulator:
        agents = {
            spec.name: make_agent(settings.agent, spec, clients[spec.name], settings.output_limit, proxy)
            for spec in specs
        }
        for layer in sorted({a.layer for a in agents.values() if a.layer is not None}):
            if agent_image is not None and registry is not None:
                images = require(backend, DistributesImages, f"--registry {registry}")
                images.adopt_layer(layer, agent_image, registry)  # pulled, not built
            else:
                layers = require(backend, AgentLayers, f"installed agent {layer}")
                layers.prepare_layer(layer)  # an installed agent's slow build, once per engine, from its recipe
        if any(a.egress == "proxy" for a in agents.values()):
            proxy.start()  # before any sandbox is made: a proxied one is relayed to it
        yield AttemptSetup(settings, run_id, backend, store, {s.name: s for s in specs}, agents, simulator)
