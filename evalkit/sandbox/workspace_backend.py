"""The driver's backend in a cluster run without a registry: it builds the workspaces the tasks
carry to the nodes (git on the driver, which has the suite and its repositories) and nothing
else. Sandboxes and their images are the nodes' (each opens the run's backend by name there), so
the driver needs no Docker engine. With `--registry` the driver builds and pushes the images, and
opens the real backend instead.

It meets the core `SandboxBackend` only, so that the driver's code is the same either way: it has
none of the optional capabilities (protocol.py), and `open` is one SandboxError saying that the
nodes open sandboxes, never a silent no-op."""

from __future__ import annotations

from collections.abc import Callable

from evalkit.errors import SandboxError
from evalkit.sandbox.egress import Egress
from evalkit.sandbox.protocol import Sandbox
from evalkit.sandbox.workspace import Workspace, Workspaces
from evalkit.tasks.model import Task


class WorkspaceBackend:
    """Workspaces only: no engine, no sandbox ever open."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self._workspaces = Workspaces()

    @classmethod
    def connect(cls, run_id: str, log: Callable[[str], None] = lambda line: None) -> WorkspaceBackend:
        """Nothing to reach and nothing left by dead runs to remove."""
        return cls(run_id)

    def workspace(self, task: Task) -> Workspace:
        return self._workspaces.of(task)

    def open(
        self, task: Task, role: str, network: bool = False, egress: Egress | None = None, layer: str | None = None
    ) -> Sandbox:
        raise SandboxError(
            f"the {role} sandbox of {task.id}: the driver of a cluster run builds workspaces only; "
            "the nodes make sandboxes, images"
        )

    def close(self) -> int:
        return 0
