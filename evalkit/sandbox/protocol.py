"""The Sandbox protocol, and what opens sandboxes: `SandboxBackend`, the core every backend meets
(connect, open, workspace, close), and the optional capabilities a backend may add, each a small
protocol of its own that the code needing it checks for with `require` (one line naming the
backend and what it lacks) or asks about with isinstance where doing nothing is the honest answer
(`prepare_ahead`, `engine_of`). Every backend of `evalkit.sandbox.backend_table` passes
tests/integration/test_backend_conformance.py through these protocols only: the core for all, a
capability's tests for those that have it."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar, runtime_checkable

from evalkit.errors import SandboxError
from evalkit.sandbox.egress import Egress, ProxyRoute, resolve_egress
from evalkit.sandbox.engine_watch import EngineWatch

if TYPE_CHECKING:
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
    """An isolated workspace holding a task's base tree as a one-commit git repository.

    What every backend's sandboxes keep (tests/integration/test_backend_conformance.py checks each):
    commands run as one non-root user (the workspace's owner; system folders not writable), in one
    persistent bash (`cd` and exports carry over: the tool loop tells the model so), with a process
    view of the sandbox's own (a reaping init, so that a killed command leaves nothing running and
    no zombie); without network it reaches nothing but its own localhost (no route out, only `lo`).
    A path that is not absolute starts at `workdir`; an absolute one is the sandbox's own (its /tmp,
    not the host's). A sandbox is a context manager: `with backend.open(...) as sandbox:` closes it."""

    workdir: str
    base_commit: str  # the workspace repository's only commit
    proxy_url: str | None  # the run's model proxy as the agent calls it (egress "proxy"), else None

    def exec(
        self, cmd: str, timeout: float | None = None, cwd: str | None = None, output_limit: int | None = None
    ) -> ExecResult:
        """Run a shell command; never raises for a failing or hanging command. Each output stream is
        capped at `output_limit` bytes (head and tail kept, a marker between; None: the backend's
        limit, DEFAULT_OUTPUT_LIMIT unless told). `timeout` None is 120 s; at the timeout the
        command and everything it started are killed and the exit code is 124. `cwd` None: the
        shell's current folder (the workdir until a command changes it)."""
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
        """A tar archive of `path`, its entry named by the path's last part (`a/b.txt` → `b.txt`)."""
        ...

    def diff(self) -> str:
        """Every change since the base commit, new files included, as a git diff: what
        `git add --all && git diff --cached --binary BASE` prints, its bytes kept as git wrote them
        (`diffs.diff_text`). When the agent broke the workspace's git, a backend may diff against a
        copy of the base it keeps (base_git.py) or raise SandboxError; never a wrong diff."""
        ...

    def kill_all(self) -> None:
        """Kill every process the workspace user started (used when an attempt's time runs out)."""
        ...

    def close(self) -> None:
        """Destroy the sandbox; safe to call twice."""
        ...

    def __enter__(self) -> Sandbox: ...

    def __exit__(self, *exc: object) -> None:
        """`close()`."""
        ...


@runtime_checkable
class PrivilegedStart(Protocol):
    """A sandbox that can start a process as its root, beyond the sandbox user's reach: where
    evalkit's collector runs (verify/collector.py). Optional; without it the guard's report file
    is read instead, with what that allows stated (docs/design.md, "Limits, stated")."""

    def start_privileged(self, argv: list[str]) -> None:
        """Start `argv` detached as root; never waits for it."""
        ...


@runtime_checkable
class SandboxBackend(Protocol):
    """The core: opens sandboxes for one run (`run_id`, given when the backend is made) and removes
    whatever is still open on `close()`. Made by the backend table through `connect`."""

    run_id: str

    @classmethod
    def connect(cls, run_id: str, log: Callable[[str], None]) -> SandboxBackend:
        """The backend, ready to open run `run_id`'s sandboxes (its engine reached; what dead runs
        left removed, said through `log`); one SandboxError line when it cannot be."""
        ...

    def open(
        self, task: Task, role: str, network: bool = False, egress: Egress | None = None, layer: str | None = None
    ) -> Sandbox:
        """A sandbox holding `task`'s base workspace; `role` says what it is for (agent, score);
        `egress` what it may reach (default: `network` False is "none", True is "full"); `layer`,
        an installed agent (`sandboxes/agents/<layer>/`) whose files its image gets on top of the
        task's (never a scoring sandbox's; a backend without `AgentLayers` never gets one, and one
        without `ModelProxyRoute` never gets egress "proxy": the run refuses first, with `require`).
        A backend that cannot keep a promise of `Sandbox` raises SandboxError here, never opens a
        lesser sandbox."""
        ...

    def workspace(self, task: Task) -> Workspace:
        """`task`'s base tree as this backend puts it into its sandboxes, built once per task and
        kept for the run (scoring reads the base files from it instead of building it again): a
        `Workspace` is a tar archive rooted at `.` of the one-commit repository, owned by the sandbox
        user, and that commit; `Workspaces().of(task)` (workspace.py) builds and keeps them."""
        ...

    def close(self) -> int:
        """Remove every sandbox still open (or made ahead, or being removed); how many were
        removed. Safe to call twice."""
        ...


# -- optional capabilities: a backend has one by having its members -------------------------------


@runtime_checkable
class PreparesAhead(Protocol):
    """A pool: sandboxes made before they are asked for (`prepare_ahead` does nothing without it)."""

    def prepare(self, requests: Sequence[SandboxRequest], capacity: int) -> None:
        """The sandboxes about to be opened, soonest first (a later call adds to them): the backend
        may make up to `capacity` ready ahead (and each one's `then` once it is handed over), so
        that `open` hands one over at once, and may remove closed sandboxes in the background
        until `close()`. `open` behaves the same whether or not this was called."""
        ...


@runtime_checkable
class AgentLayers(Protocol):
    """Installed agents (`sandboxes/agents/<layer>/`) layered onto the task's image: `open(layer=)`."""

    def prepare_layer(self, layer: str) -> None:
        """Make the installed agent `layer` ready to open sandboxes with (its image built once,
        slow): a build that fails is one SandboxError saying why, raised before any attempt."""
        ...


@runtime_checkable
class ModelProxyRoute(Protocol):
    """Sandboxes of egress "proxy": they reach the run's model proxy and nothing else."""

    proxy: ProxyRoute | None  # where `egress="proxy"` sandboxes are relayed (the run's model proxy), once known

    def proxy_host(self) -> str:
        """The host address a model proxy must listen on for this backend's `egress="proxy"`
        sandboxes to reach it (and, as far as the backend can choose, nothing outside the host)."""
        ...


@runtime_checkable
class DistributesImages(Protocol):
    """Images through a container registry (`--registry`), for the nodes of a cluster run."""

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


@runtime_checkable
class AdoptsWorkspaces(Protocol):
    """Workspaces built elsewhere: a cluster node's, which the attempt's payload carries."""

    def adopt_workspace(self, task: Task, workspace: Workspace) -> None:
        """Use `workspace` for `task` instead of building it: one built elsewhere (by the driver of
        a cluster run, which has the suite and the repository) travelled with the attempt."""
        ...


@runtime_checkable
class WatchesEngine(Protocol):
    """An engine that can stop answering (a daemon): attempts wait while it does not."""

    engine: EngineWatch  # whether the backend's engine answers


@runtime_checkable
class ListsLeftovers(Protocol):
    """What of the run is still there, for the leak checks and for Ctrl-C's last word."""

    live: Sized  # the sandboxes opened and not yet removed (what `close()` could not remove stays)

    def remaining(self) -> list[str]:
        """The ids of this run's sandboxes the engine still holds, asked of the engine itself
        rather than of the backend's own bookkeeping (the conformance suite's leak check)."""
        ...


CAPABILITIES = (PreparesAhead, AgentLayers, ModelProxyRoute, DistributesImages, AdoptsWorkspaces, WatchesEngine,
                ListsLeftovers)  # fmt: skip

Capability = TypeVar("Capability")


def require(backend: SandboxBackend, capability: type[Capability], needed_for: str) -> Capability:
    """`backend` as having `capability` (one of the protocols above), or one SandboxError line
    saying which backend lacks what `needed_for` needs."""
    if not isinstance(backend, capability):
        raise SandboxError(
            f"{needed_for} needs a backend with {capability.__name__}; {type(backend).__name__} has none"
        )
    return backend


def prepare_ahead(backend: SandboxBackend, requests: Sequence[SandboxRequest], capacity: int) -> None:
    """`backend.prepare(...)` when it keeps a pool; without one, nothing (its `open` makes each)."""
    if isinstance(backend, PreparesAhead):
        backend.prepare(requests, capacity)


def engine_of(backend: SandboxBackend) -> EngineWatch:
    """The backend's engine watch; a backend with no engine that can go away gets one that always
    answers (attempts never wait)."""
    return backend.engine if isinstance(backend, WatchesEngine) else EngineWatch(lambda: True)
