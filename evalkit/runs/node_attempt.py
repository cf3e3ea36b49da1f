"""One attempt run where a cluster executor puts it (a Ray node), from what travels with it.

`NodeJob` is the run's half (models, agent, budgets, where built-in models are served), pickled
once and shared by every attempt; `NodeAttempt` is one attempt's half (its task as a `TaskPayload`:
the workspace archive built on the driver and the task's recipe folder, so a node needs neither
the suite folder nor the repository). Neither holds a secret: API keys are read on the node from its own variables, by
the variable names the `ModelSpec` carries, exactly as on the driver. The built-in models' token
is a per-run value guarding reference answers, not a user's key.

On the node the attempt opens its own backend on the node's engine (whose connect sweeps the
containers of dead evalkit processes there: a worker killed with its node leaves some), its own
model client and, for agents behind the model proxy, its own proxy; it writes its trajectory in
a temporary run folder and hands back the record and the trajectory's bytes. The driver writes
the trajectory, then appends the row, as for a local attempt."""

from __future__ import annotations

import tempfile
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from evalkit.agent.agent_table import make_agent
from evalkit.bridge.run_proxy import RunProxy
from evalkit.integrity import IntegrityPolicy
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.runs.attempt import AttemptKey, AttemptOutcome, run_attempt
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.node_backend import node_backend, node_error, node_name
from evalkit.runs.store import RunStore
from evalkit.runs.task_payload import TaskPayload
from evalkit.runs.user_setup import UserSetup, user_channel
from evalkit.sandbox.protocol import AgentLayers, DistributesImages, require


@dataclass(frozen=True)
class BuiltinEndpoint:
    """Where a cluster's workers reach the driver's built-in models, and the run's token for them."""

    base_url: str
    token: str


@dataclass(frozen=True)
class NodeAttempt:
    payload: TaskPayload
    model: str
    sample: int

    @property
    def key(self) -> AttemptKey:
        """The attempt as the driver knows it (its task as loaded there)."""
        return AttemptKey(self.payload.task, self.model, self.sample)


@dataclass(frozen=True)
class NodeJob:
    """The run's settings every node attempt shares (picklable, without secrets)."""

    run_id: str
    backend: str
    specs: dict[str, ModelSpec]
    agent: str
    overrides: LimitOverrides
    output_limit: int
    integrity_policy: IntegrityPolicy
    builtin: BuiltinEndpoint | None = None
    user: UserSetup = field(default_factory=UserSetup)  # who answers `ask_user`
    agent_image: str | None = None  # with --registry: the installed agent's own image, pushed there
    registry: str | None = None

    def __call__(self, attempt: NodeAttempt) -> AttemptOutcome:
        """Run `attempt` on this node's engine; a failure of the node's setup (no engine, a key
        variable not set there) is raised as one line naming the node."""
        node = node_name()
        spec = self.specs[attempt.model]
        builtin = self.builtin if spec.builtin else None
        with node_backend(self.backend, self.run_id, attempt.payload) as (backend, task):
            key = AttemptKey(task, attempt.model, attempt.sample)
            try:
                client = ChatClient(
                    spec,
                    base_url=builtin.base_url if builtin else None,
                    api_key=builtin.token if builtin else None,
                )
            except Exception as exc:  # a key or header variable not set on this node
                raise node_error(exc) from None
            with closing(client), RunProxy(backend) as proxy, tempfile.TemporaryDirectory() as tmp:
                agent = make_agent(self.agent, spec, client, self.output_limit, proxy)
                if agent.layer is not None and self.agent_image is not None and self.registry is not None:
                    images = require(backend, DistributesImages, f"--registry {self.registry}")
                    images.adopt_layer(agent.layer, self.agent_image, self.registry)  # pulled, not built
                elif agent.layer is not None:
                    layers = require(backend, AgentLayers, f"installed agent {agent.layer}")
                    layers.prepare_layer(agent.layer)  # built once per node, from the same recipe and hash
                if agent.egress == "proxy":
                    proxy.start()
                store = RunStore(Path(tmp) / self.run_id)
                store.open()
                limits = self.overrides.apply(key.task.limits)
                with self.user.serving([task]) as simulator:
                    channel = user_channel(self.user, simulator, agent, task, limits)
                    record = run_attempt(
                        key, spec, agent, backend, store, self.run_id, limits, self.integrity_policy, channel
                    )
                trajectory_path = store.dir / record.trajectory
                trajectory = trajectory_path.read_bytes() if trajectory_path.exists() else b""
                files = [f for f in store.trajectories.iterdir() if f.is_file() and f != trajectory_path]
                beside = {f.name: f.read_bytes() for f in files}  # this attempt's alone: the store is its own
                return AttemptOutcome(record.model_copy(update={"node": node}), trajectory=trajectory, beside=beside)
