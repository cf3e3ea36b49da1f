"""The Sandbox and SandboxBackend protocols: the few operations every stage needs from an
isolated workspace, and from what opens one. Every backend of `evalkit.sandbox.registry` passes
tests/integration/test_backend_conformance.py through these operations only."""

from __future__ import annotations

from collections.abc import Sequence, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from evalkit.sandbox.egress import Egress, ProxyRoute, resolve_egress

if TYPE_CHECKING:
    from evalkit.sandbox.engine_watch import EngineWatch
    from evalkit.sandbox.workspace import Workspace
    from evalkit.tasks.model import Task

DEFAULT_OUTPUT_LIMIT = 64_000  # bytes of each output stream a command keeps, unless the caller says otherwise


@dataclass(frozen=True)
class ExecResult:
    """Outcome of one command. `truncated` says output was cut (head and tail kept, marker between);
    `timed_out` says the command and everything it started were killed at the timeout (exit 124)."""

    exit_code: int
    stdout: str
    stderr: str
    duration: float
    truncated: bool = False
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


@dataclass(frozen=True, eq=False)
class SandboxRequest:
    """A sandbox a caller will open, as `backend.open(task, role, network, egress)` asks for it;
    `then`, the one the same thread opens next (an attempt's scoring sandbox after its agent's)."""

    task: Task
    role: str
    network: bool = False  # older callers' flag: True is egress "full"
    then: SandboxRequest | None = None
    egress: Egress | None = None  # what the sandbox may reach (egress.py); None: what `network` says
    layer: str | None = None  # an installed agent whose files the sandbox's image gets (sandboxes/agents/)

    def __post_init__(self) -> None:
        resolve_egress(self.network, self.egress)  # a contradiction fails where it is asked for

    @property
    def key(self) -> tuple[str, str, Egress, str | None]:
        """What makes two sandboxes interchangeable: the same task, role, egress and agent layer."""
        return (self.task.id, self.role, resolve_egress(self.network, self.egress), self.layer)


@runtime_checkable
class Sandbox(Protocol):
    """An isolated workspace holding a task's base tree as a one-commit git repository."""

    workdir: str
    base_commit: str  # the workspace repository's only commit
    proxy_url: str | None  # the run's model proxy as the agent calls it (egress "proxy"), else None

    def exec(
        self, cmd: str, timeout: float | None = None, cwd: str | None = None, output_limit: int | None = None
    ) -> ExecResult:
        """Run a shell command; never raises for a failing or hanging command. Each output stream is
        capped at `output_limit` bytes (head and tail kept, a marker between)."""
        ...

    def read_as_user(self, path: str, timeout: float | None = None, output_limit: int | None = None) -> ExecResult:
        """A file's text as the sandbox user reads it, a relative path taken from the shell's current
        folder (as `exec("cat PATH")` would, and capped the same way); never raises for a missing,
        unreadable or folder path: a non-zero exit with the reason in stderr."""
        ...

    def write_as_user(self, path: str, content: bytes, timeout: float | None = None) -> ExecResult:
        """Create or replace a file as the sandbox user (who owns it if new), making parent folders;
        paths as `read_as_user`; a path the user cannot write is a non-zero exit, never a raise."""
        ...

    def read_file(self, path: str) -> str:
        """Text of a file (raises FileNotFoundError)."""
        ...

    def write_file(self, path: str, content: str | bytes) -> None:
        """Create or replace a file, making parent folders."""
        ...

    def copy_in(self, tar_bytes: bytes, dest: str) -> None:
        """Unpack a tar archive at `dest`."""
        ...

    def copy_out(self, path: str) -> bytes:
        """A tar archive of `path`."""
        ...

    def diff(self) -> str:
        """Every change since the base commit, new files included, as a git diff."""
        ...

    def kill_all(self) -> None:
        """Kill every process the workspace user started (used when an attempt's time runs out)."""
        ...

    def close(self) -> None:
        """Destroy the sandbox; safe to call twice."""
        ...


class SandboxBackend(Protocol):
    """Opens sandboxes for one run (`run_id`, given when the backend is made) and removes whatever
    is still open on `close()`."""

    run_id: str
    engine: EngineWatch  # whether the backend's engine answers: attempts wait while it does not
    live: Sized  # the sandboxes opened and not yet removed (what `close()` could not remove stays)
    proxy: ProxyRoute | None  # where `egress="proxy"` sandboxes are relayed (the run's model proxy), once known

    def open(
        self, task: Task, role: str, network: bool = False, egress: Egress | None = None, layer: str | None = None
    ) -> Sandbox:
        """A sandbox holding `task`'s base workspace; `role` says what it is for (agent, score);
        `egress` what it may reach (default: `network` False is "none", True is "full"); `layer`,
        an installed agent (`sandboxes/agents/<layer>/`) whose files its image gets on top of the
        task's (never a scoring sandbox's)."""
        ...

    def prepare_layer(self, layer: str) -> None:
        """Make the installed agent `layer` ready to open sandboxes with (its image built once,
        slow): a build that fails is one SandboxError saying why, raised before any attempt."""
        ...

    def proxy_host(self) -> str:
        """The host address a model proxy must listen on for this backend's `egress="proxy"`
        sandboxes to reach it (and, as far as the backend can choose, nothing outside the host)."""
        ...

    def workspace(self, task: Task) -> Workspace:
        """`task`'s base tree as this backend puts it into its sandboxes, built once per task and
        kept for the run (scoring reads the base files from it instead of building it again)."""
        ...

    def publish_image(self, task: Task, registry: str) -> str:
        """The task's image tag, its image pushed to `registry` (for cluster nodes to pull)."""
        ...

    def adopt_image(self, task: Task, tag: str, registry: str) -> None:
        """Use image `tag` for `task` instead of resolving its `image`; pulled from `registry` if missing."""
        ...

    def publish_layer(self, layer: str, registry: str) -> str:
        """Installed agent `layer`'s own image tag, the image built if missing and pushed to
        `registry` (nodes then layer it onto their task images without building it)."""
        ...

    def adopt_layer(self, layer: str, tag: str, registry: str) -> None:
        """Use image `tag` as installed agent `layer`'s own image instead of building it from its
        recipe; pulled from `registry` if missing."""
        ...

    def adopt_workspace(self, task: Task, workspace: Workspace) -> None:
        """Use `workspace` for `task` instead of building it: one built elsewhere (by the driver of
        a cluster run, which has the suite and the repository) travelled with the attempt."""
        ...

    def prepare(self, requests: Sequence[SandboxRequest], capacity: int) -> None:
        """The sandboxes about to be opened, soonest first (a later call adds to them): the backend
        may make up to `capacity` ready ahead (and each one's `then` once it is handed over), so
        that `open` hands one over at once, and may remove closed sandboxes in the background
        until `close()`. Doing nothing is a correct implementation; `open` behaves the same."""
        ...

    def close(self) -> int:
        """Remove every sandbox still open, made ahead, or being removed; how many were removed.
        Safe to call twice."""
        ...

    def remaining(self) -> list[str]:
        """The ids of this run's sandboxes the engine still holds, asked of the engine itself
        rather than of the backend's own bookkeeping (the conformance suite's leak check)."""
        ...
