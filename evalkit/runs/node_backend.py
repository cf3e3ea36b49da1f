"""The node's side of a cluster job: this node's name, and its own backend holding a task that
travelled as a `TaskPayload` (workspace adopted, recipe folder unpacked). Opening the backend
sweeps the containers of dead evalkit processes on this node's engine (a worker killed with its
node leaves some); closing it removes what the job opened. A node that cannot open one (no
engine) says so in one line naming itself."""

from __future__ import annotations

import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from evalkit.runs.task_payload import TaskPayload
from evalkit.sandbox.backend_table import open_backend
from evalkit.sandbox.protocol import AdoptsWorkspaces, DistributesImages, SandboxBackend, require
from evalkit.tasks.model import Task


class NodeError(Exception):
    """A job a node could not start (its engine, its setup): one line naming the node.
    `node_id` (the cluster's id of the node, when known) lets the executor leave the node out."""

    def __init__(self, message: str, node_id: str | None = None) -> None:
        super().__init__(message)
        self.node_id = node_id

    def __reduce__(self) -> tuple:  # raised on a node, rebuilt on the driver
        return (NodeError, (str(self), self.node_id))


def node_error(reason: object) -> NodeError:
    """`reason` as this node's one line."""
    return NodeError(f"node {node_name()}: {reason}", _ray_node_id())


def _ray_node_id() -> str | None:
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    return ray.get_runtime_context().get_node_id()


def node_name() -> str:
    """This node as rows name it: the host, and Ray's node id when a Ray worker runs the job
    (several nodes may share a host, as in tests)."""
    host = socket.gethostname()
    node_id = _ray_node_id()  # Ray is imported by the worker that runs us; never imported here
    return host if node_id is None else f"{host}/{node_id[:12]}"


@contextmanager
def node_backend(backend_name: str, run_id: str, payload: TaskPayload) -> Iterator[tuple[SandboxBackend, Task]]:
    """A backend on this node's engine holding `payload`'s task as this node runs it."""
    try:
        backend = open_backend(backend_name, run_id)
    except Exception as exc:
        raise node_error(exc) from None
    try:
        task = payload.landed()
        require(backend, AdoptsWorkspaces, f"{task.id} on a cluster node").adopt_workspace(task, payload.workspace)
        if payload.image is not None and payload.registry is not None:
            require(backend, DistributesImages, f"--registry {payload.registry}").adopt_image(
                task, payload.image, payload.registry
            )
        yield backend, task
    finally:
        backend.close()
