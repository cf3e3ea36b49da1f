"""One attempt run where a cluster executor puts it (a Ray node), from what travels with it.

`NodeJob` is the run's half (models, agent, budgets, where built-in models are served), pickled
once and shared by every attempt; `NodeAttempt` is one attempt's half (its task as a `TaskPayload`:
the workspace archive built on the driver and the task's recipe folder, so a node needs neither
the suite folder nor the repository). Neither holds a secret: API keys are read on the node from its own environment, by
the variable names the `ModelSpec` carries, exactly as on the driver. The built-in models' token
is a per-run value guarding reference answers, not a user's key.

On the node the attempt opens its own backend on the node's engine (whose connect sweeps the
containers of dead evalkit processes there: a worker killed with its node leaves some), its own
model client and, for agents behind the model proxy, its own proxy; it writes its trajectory in
a temporary run folder and hands back the record and the trajectory's bytes. The driver writes
the trajectory, then appends the row, as for a local attempt."""

from __future__ import annotations

import socket
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evalkit.agent.registry import make_agent
from evalkit.bridge.run_proxy import RunProxy
from evalkit.integrity import IntegrityPolicy
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.runs.attempt import AttemptKey, AttemptOutcome, run_attempt
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.store import RunStore
from evalkit.runs.task_payload import TaskPayload
from evalkit.sandbox.registry import open_backend


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

    def __call__(self, attempt: NodeAttempt) -> AttemptOutcome:
        """Run `attempt` on this node's engine; a failure of the node's setup (no engine, a key
        variable not set there) is raised as one line naming the node."""
        node = node_name()
        key = AttemptKey(attempt.payload.landed(), attempt.model, attempt.sample)
        spec = self.specs[key.model]
        try:
            backend = open_backend(self.backend, self.run_id)
        except Exception as exc:
            raise NodeError(f"node {node}: {exc}") from None
        client: ChatClient | None = None
        try:
            backend.adopt_workspace(key.task, attempt.payload.workspace)
            builtin = self.builtin if spec.builtin else None
            try:
                client = ChatClient(
                    spec,
                    base_url=builtin.base_url if builtin else None,
                    api_key=builtin.token if builtin else None,
                )
            except Exception as exc:
                raise NodeError(f"node {node}: {exc}") from None
            with RunProxy(backend) as proxy, tempfile.TemporaryDirectory(prefix="evalkit-node-") as tmp:
                agent = make_agent(self.agent, spec, client, self.output_limit, proxy)
                if agent.layer is not None:
                    backend.prepare_layer(agent.layer)  # built once per node, from the same recipe and hash
                if agent.egress == "proxy":
                    proxy.start()
                store = RunStore(Path(tmp) / self.run_id)
                store.open()
                limits = self.overrides.apply(key.task.limits)
                record = run_attempt(key, spec, agent, backend, store, self.run_id, limits, self.integrity_policy)
                trajectory_path = store.dir / record.trajectory
                trajectory = trajectory_path.read_bytes() if trajectory_path.exists() else b""
                return AttemptOutcome(record.model_copy(update={"node": node}), trajectory=trajectory, node=node)
        finally:
            if client is not None:
                client.close()
            backend.close()


def node_name() -> str:
    """This node as rows name it: the host, and Ray's node id when a Ray worker runs the attempt
    (several nodes may share a host, as in tests)."""
    host = socket.gethostname()
    ray = sys.modules.get("ray")  # imported by the worker that runs us; never imported here
    if ray is None or not ray.is_initialized():
        return host
    return f"{host}/{ray.get_runtime_context().get_node_id()[:12]}"


class NodeError(Exception):
    """An attempt a node could not start (its engine, its environment): one line naming the node."""
