"""One attempt run where a cluster executor puts it (a Ray node), from what travels with it.

`NodeJob` is the run's half (models, agent, budgets, where built-in models are served), pickled
once and shared by every attempt; `NodeAttempt` is one attempt's half (its task as a `TaskPayload`:
the workspace archive built on the driver and the task's recipe folder, so a node needs neither
the suite folder nor the repository). Neither holds a secret: API keys are read on the node from its own variables, by
the variable names the `ModelSpec` carries, exactly as on the driver. The built-in models' token
is a per-run value guarding reference answers, not a user's key.

On the node the attempt opens its own backend on the node's engine (whose connect sweeps the
containers of dead evalkit processes there: a worker killed with its node leaves some), its own
model client, and the rest of the attempt's setup as a local run makes it (runs/attempt_setup.py,
from the run's `AttemptSettings`: agent, proxy, user, budgets); it writes its trajectory in
a temporary run folder and hands back the record and the trajectory's bytes. The driver writes
the trajectory, then appends the row, as for a local attempt."""

from __future__ import annotations

import tempfile
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.runs.attempt import AttemptKey, AttemptOutcome
from evalkit.runs.attempt_setup import set_up_attempts
from evalkit.runs.node_backend import node_backend, node_error, node_name
from evalkit.runs.settings import AttemptSettings
from evalkit.runs.store import RunStore
from evalkit.runs.task_payload import TaskPayload


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
    settings: AttemptSettings  # the agent, budgets, user... every attempt of the run shares
    builtin: BuiltinEndpoint | None = None
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
            with closing(client), tempfile.TemporaryDirectory() as tmp:
                store = RunStore(Path(tmp) / self.run_id)
                store.open()
                with set_up_attempts(
                    self.settings, self.run_id, backend, store, [spec], {spec.name: client}, [task],
                    agent_image=self.agent_image, registry=self.registry,
                ) as attempts:  # fmt: skip
                    record = attempts.run(key)
                trajectory_path = store.dir / record.trajectory
                trajectory = trajectory_path.read_bytes() if trajectory_path.exists() else b""
                files = [f for f in store.trajectories.iterdir() if f.is_file() and f != trajectory_path]
                beside = {f.name: f.read_bytes() for f in files}  # this attempt's alone: the store is its own
                return AttemptOutcome(record.model_copy(update={"node": node}), trajectory=trajectory, beside=beside)
