"""The driver's backend in a cluster run without a registry: it builds the workspaces the tasks
carry to the nodes (git on the driver, which has the suite and its repositories) and nothing
else. Sandboxes and their images are the nodes' (each opens the run's backend by name there), so
the driver needs no Docker engine. With `--registry` the driver builds and pushes the images, and
opens the real backend instead.

It meets `SandboxBackend` so that the driver's code is the same either way; what only a node may
do (open a sandbox, resolve an image) is one SandboxError saying so, never a silent no-op."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.errors import SandboxError
from evalkit.sandbox.egress import Egress, ProxyRoute
from evalkit.sandbox.engine_watch import EngineWatch
from evalkit.sandbox.protocol import Sandbox, SandboxRequest
from evalkit.sandbox.workspace import Workspace, Workspaces
from evalkit.tasks.model import Task


class WorkspaceBackend:
    """Workspaces only: no engine to watch (it never goes down), no sandbox ever open."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.engine = EngineWatch(lambda: True)  # nothing here waits for an engine
        self.live: tuple[()] = ()
        self.proxy: ProxyRoute | None = None
        self._workspaces = Workspaces()

    def workspace(self, task: Task) -> Workspace:
        return self._workspaces.of(task)

    def adopt_workspace(self, task: Task, workspace: Workspace) -> None:
        self._workspaces.adopt(task, workspace)

    def prepare(self, requests: Sequence[SandboxRequest], capacity: int) -> None:
        """Nothing to make ahead: the nodes open the sandboxes."""

    def close(self) -> int:
        return 0

    def remaining(self) -> list[str]:
        return []

    def open(
        self, task: Task, role: str, network: bool = False, egress: Egress | None = None, layer: str | None = None
    ) -> Sandbox:
        raise _nodes_only(f"the {role} sandbox of {task.id}")

    def prepare_layer(self, layer: str) -> None:
        raise _nodes_only(f"agent {layer}'s image")

    def proxy_host(self) -> str:
        raise _nodes_only("a model proxy for sandboxes")

    def publish_image(self, task: Task, registry: str) -> str:
        raise _nodes_only(f"{task.id}'s image")

    def adopt_image(self, task: Task, tag: str, registry: str) -> None:
        raise _nodes_only(f"{task.id}'s image")

    def publish_layer(self, layer: str, registry: str) -> str:
        raise _nodes_only(f"agent {layer}'s image")

    def adopt_layer(self, layer: str, tag: str, registry: str) -> None:
        raise _nodes_only(f"agent {layer}'s image")


def _nodes_only(what: str) -> SandboxError:
    return SandboxError(f"{what}: the driver of a cluster run builds workspaces only; the nodes make sandboxes, images")
