"""DockerSandbox: a task workspace in a locked-down container, driven by one persistent command server.

Safety by default: no network (or, asked for, only the run's model proxy: proxy_net.py),
memory/CPU/pids caps, every capability dropped, no-new-privileges, commands run as the
unprivileged `agent` user, no host mounts, labels on the container, and removal on close, on
error and (through `LiveContainers`) on Ctrl-C.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import itertools
import posixpath
import shlex
import socket
import struct
import tarfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import docker
import docker.errors

from evalkit.diffs import diff_bytes, diff_text
from evalkit.errors import SandboxError
from evalkit.sandbox.base_git import SCRATCH_PARENT, base_git_diff_command, base_git_name, base_git_tar
from evalkit.sandbox.command_channel import SERVER_SOURCE, CommandChannel
from evalkit.sandbox.docker.containers import LiveContainers, container_labels, remove_container
from evalkit.sandbox.docker.engine_errors import docker_engine_unreachable
from evalkit.sandbox.docker.proxy_net import ProxyNet
from evalkit.sandbox.egress import PROXY_URL, Egress, ProxyRoute, resolve_egress
from evalkit.sandbox.engine_watch import engine_error_reason
from evalkit.sandbox.protocol import DEFAULT_OUTPUT_LIMIT, ExecResult
from evalkit.sandbox.workspace import Workspace, tar_single_file

SANDBOX_USER = "1000:1000"
# Says "inside an evalkit sandbox" to the code evalkit puts there (the guard plugin's stray-process
# kill); never set on a host, where killing every other process of the user would be a disaster.
SANDBOX_MARK = {"EVALKIT_SANDBOX": "1"}
MAX_DIFF_BYTES = 64 * 1024 * 1024
_DIFF_OUTPUT_LIMIT = MAX_DIFF_BYTES // 3 * 4 + 4  # the diff as base64
_REPLY_MARGIN_S = 15.0  # the server enforces the timeout; the host waits this much longer before giving up on it


def _base64_of(command: str) -> str:
    """`command`'s output as one base64 line; its exit status kept (a subshell, so `pipefail` and
    any `exit` stay out of the persistent shell)."""
    return f"(set -o pipefail; {{ {command}; }} | base64 -w0)"


@dataclass(frozen=True)
class SandboxSpec:
    """How a sandbox container is made. The defaults are the safe ones."""

    image: str
    workdir: str = "/workspace"
    network: bool = False  # older callers' flag: True is egress "full"
    egress: Egress | None = None  # None: what `network` says
    proxy: ProxyRoute | None = None  # where egress "proxy" is relayed (required for it)
    mem_limit: str = "2g"
    cpus: float = 1.0
    pids_limit: int = 256
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    default_timeout_s: float = 120.0
    env: dict[str, str] = field(default_factory=dict)


@contextlib.contextmanager
def _engine_errors():
    """An engine that stops answering ends the attempt (a SandboxError), rather than being shown
    to the agent as one failed tool call after another."""
    try:
        yield
    except Exception as exc:
        if docker_engine_unreachable(exc):
            raise SandboxError(f"the Docker engine stopped answering ({engine_error_reason(exc)})") from exc
        raise


def _missing_image(image: str) -> SandboxError:
    return SandboxError(f"image {image} not found: run `evalkit sandbox build-base` (and build the suite image)")


class _DockerExecStream:
    """The socket of one `docker exec` running the command server, read as the server's stdout.

    The stream is Docker's multiplexed format (8-byte frame headers) because the exec has no TTY:
    the frames are undone here, and the server's stderr is kept to say why it exited.
    """

    def __init__(self, client: docker.DockerClient, container_id: str, workdir: str) -> None:
        exec_id = client.api.exec_create(
            container_id, ["python3", "-u", "-c", SERVER_SOURCE], stdin=True, user=SANDBOX_USER, workdir=workdir
        )["Id"]
        response = client.api.exec_start(exec_id, socket=True)
        self._sock: socket.socket = getattr(response, "_sock", response)
        self._stderr = bytearray()

    def settimeout(self, seconds: float) -> None:
        self._sock.settimeout(seconds)

    def sendall(self, data: bytes) -> None:
        self._sock.sendall(data)

    def receive(self) -> bytes:
        while True:
            kind, data = self._frame()
            if kind != 2:
                return data
            self._stderr += data

    def _frame(self) -> tuple[int, bytes]:
        header = self._read_exact(8)
        kind, size = struct.unpack(">BxxxL", header)
        return kind, self._read_exact(size)

    def _read_exact(self, size: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self._sock.recv(size - len(chunks))
            if not chunk:
                detail = self._stderr.decode(errors="replace").strip()[-300:]
                raise ConnectionError(f"command server exited{': ' + detail if detail else ''}")
            chunks += chunk
        return bytes(chunks)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()


class DockerSandbox:
    """A running container holding one task workspace. Use as a context manager."""

    def __init__(
        self,
        client: docker.DockerClient,
        spec: SandboxSpec,
        workspace: Workspace,
        *,
        run_id: str,
        task_id: str,
        role: str = "agent",
        live: LiveContainers | None = None,
        remove_later: Callable[[Callable[[], None]], None] | None = None,
    ) -> None:
        self.workdir = spec.workdir
        self.spec = spec
        self.base_commit = workspace.base_commit
        self._workspace = workspace  # its .git is the base the diff falls back on (base_git.py)
        self._client = client
        self._live = live
        self._remove_later = remove_later  # runs the removal on close in the background (a pool's)
        self._lock = threading.Lock()
        self._channel: CommandChannel | None = None
        self._ids = itertools.count(1)
        self._closed = False
        egress = resolve_egress(spec.network, spec.egress)
        self._proxy_net: ProxyNet | None = None
        self.proxy_url: str | None = None
        if egress == "proxy":
            if spec.proxy is None:
                raise SandboxError("a sandbox that reaches only the model proxy needs the proxy's address (none given)")
            self._proxy_net = self._open_proxy_net(spec, run_id, task_id, live)
            self.proxy_url = PROXY_URL
        # "none" leaves only loopback; not `network_disabled`, which also empties /etc/hosts,
        # so `localhost` no longer resolves and tests serving on it (sphinx's linkcheck) fail
        network_mode = self._proxy_net.name if self._proxy_net else ("none" if egress == "none" else None)
        try:
            container = client.containers.create(
                spec.image,
                command=["sleep", "infinity"],
                init=True,
                detach=True,
                labels=container_labels(run_id, task_id, role),
                network_mode=network_mode,
                mem_limit=spec.mem_limit,
                memswap_limit=spec.mem_limit,
                nano_cpus=int(spec.cpus * 1e9),
                pids_limit=spec.pids_limit,
                cap_drop=["ALL"],
                security_opt=["no-new-privileges"],
                working_dir=spec.workdir,
                environment={"HOME": "/home/agent", "PYTHONDONTWRITEBYTECODE": "1", **spec.env, **SANDBOX_MARK},
            )
        except BaseException as exc:
            self._remove_proxy_net()
            if isinstance(exc, docker.errors.ImageNotFound):
                raise _missing_image(spec.image) from None
            raise
        self.container_id: str = container.id
        if live is not None:
            live.add(self.container_id)
        try:
            container.start()
            if not client.api.put_archive(self.container_id, spec.workdir, workspace.archive):
                raise SandboxError(f"could not copy the workspace into {spec.image}")
        except BaseException:
            self.close()
            raise

    def _open_proxy_net(self, spec: SandboxSpec, run_id: str, task_id: str, live: LiveContainers | None) -> ProxyNet:
        assert spec.proxy is not None
        try:
            return ProxyNet(self._client, spec.image, spec.proxy, run_id=run_id, task_id=task_id, live=live)
        except docker.errors.ImageNotFound:
            raise _missing_image(spec.image) from None

    def _remove_proxy_net(self) -> None:
        if self._proxy_net is not None:
            self._proxy_net.remove()

    def __enter__(self) -> DockerSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- commands ---------------------------------------------------------------------------
    def exec(
        self,
        cmd: str,
        timeout: float | None = None,
        cwd: str | None = None,
        output_limit: int | None = None,
    ) -> ExecResult:
        """Run `cmd` in the sandbox's persistent bash shell as the sandbox user.

        `cd` and exports persist between calls until a timeout restarts the shell; `cwd` runs a
        `cd` first. Each stream is capped at `output_limit` bytes (head and tail kept).
        """
        timeout = timeout or self.spec.default_timeout_s
        limit = output_limit or self.spec.output_limit
        return self._request({"cmd": cmd, "timeout": timeout, "cwd": cwd, "limit": limit}, timeout)

    def read_as_user(self, path: str, timeout: float | None = None, output_limit: int | None = None) -> ExecResult:
        """A file's text read by the command server itself (no process started), as the sandbox user."""
        timeout = timeout or self.spec.default_timeout_s
        limit = output_limit or self.spec.output_limit
        return self._request({"op": "read", "path": path, "timeout": timeout, "limit": limit}, timeout)

    def write_as_user(self, path: str, content: bytes, timeout: float | None = None) -> ExecResult:
        """A file written by the command server itself (no process started), as the sandbox user."""
        payload = {"op": "write", "path": path, "data": base64.b64encode(content).decode("ascii")}
        return self._request(payload, timeout or self.spec.default_timeout_s)

    def _request(self, payload: dict, timeout: float) -> ExecResult:
        """One request to the command server; a lost channel is a failed command (exit 125), a gone
        container a SandboxError."""
        with self._lock:
            if self._closed:
                raise SandboxError("sandbox is closed")
            payload["id"] = next(self._ids)
            try:
                reply = self._ensure_channel().request(payload, timeout + _REPLY_MARGIN_S)
            except (OSError, ConnectionError, ValueError) as exc:
                # The server died (the command killed it) or hung: start a fresh one next time.
                self._drop_channel()
                with _engine_errors():
                    running = self._container_running()
                if not running:
                    raise SandboxError(f"sandbox container {self.container_id[:12]} is gone") from exc
                return ExecResult(
                    exit_code=125, stdout="", stderr=f"evalkit: command channel lost ({exc})", duration=0.0
                )
        return ExecResult(
            exit_code=int(reply["exit_code"]),
            stdout=reply["stdout"],
            stderr=reply["stderr"],
            duration=float(reply["duration"]),
            truncated=bool(reply["truncated"]),
            timed_out=bool(reply["timed_out"]),
        )

    def _ensure_channel(self) -> CommandChannel:
        if self._channel is None:
            self._channel = CommandChannel(_DockerExecStream(self._client, self.container_id, self.workdir))
        return self._channel

    def _drop_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
            self._channel = None

    def _container_running(self) -> bool:
        try:
            return self._client.api.inspect_container(self.container_id)["State"]["Running"]
        except docker.errors.NotFound:
            return False

    def docker_exec(self, cmd: str, user: str = SANDBOX_USER) -> ExecResult:
        """One plain `docker exec` (no command server): the baseline the benchmark compares with."""
        started = time.perf_counter()
        result = self._client.api.exec_create(self.container_id, ["bash", "-c", cmd], user=user)
        output = self._client.api.exec_start(result["Id"], demux=True)
        code = self._client.api.exec_inspect(result["Id"])["ExitCode"]
        out, err = output
        return ExecResult(
            code,
            (out or b"").decode(errors="replace"),
            (err or b"").decode(errors="replace"),
            time.perf_counter() - started,
        )

    def start_privileged(self, argv: list[str]) -> None:
        """Start `argv` as the container's root, detached, outside the command server: a process
        the sandbox user can neither signal nor trace (evalkit's collector, verify/collector.py)."""
        with _engine_errors():
            exec_id = self._client.api.exec_create(self.container_id, argv, user="root", workdir="/")["Id"]
            self._client.api.exec_start(exec_id, detach=True)

    def kill_all(self) -> None:
        """Kill every process of the sandbox user and start a fresh shell.

        The command server does it with kill(-1), which needs no new process, so it works even
        when a fork bomb holds every pid; a plain `docker exec` is the fallback.
        """
        with self._lock:
            try:
                self._ensure_channel().request({"op": "kill_all", "id": next(self._ids)}, _REPLY_MARGIN_S)
            except (OSError, ConnectionError, ValueError):
                self._drop_channel()
                with _engine_errors():
                    self.docker_exec("kill -KILL -1 2>/dev/null; true")

    # -- files ------------------------------------------------------------------------------
    def _abs(self, path: str) -> str:
        return path if path.startswith("/") else posixpath.join(self.workdir, path)

    def read_file(self, path: str) -> str:
        data = self.copy_out(self._abs(path))
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            member = tar.next()
            if member is None or not member.isfile():
                raise FileNotFoundError(path)
            extracted = tar.extractfile(member)
            assert extracted is not None
            return extracted.read().decode("utf-8", errors="replace")

    def write_file(self, path: str, content: str | bytes) -> None:
        path = self._abs(path)
        data = diff_bytes(content) if isinstance(content, str) else content  # a diff's own bytes kept
        parent, name = posixpath.split(path)
        self.exec(f"mkdir -p {shlex.quote(parent)}")
        self.copy_in(tar_single_file(name, data), parent)

    def copy_in(self, tar_bytes: bytes, dest: str) -> None:
        try:
            with _engine_errors():
                self._client.api.put_archive(self.container_id, self._abs(dest), tar_bytes)
        except docker.errors.NotFound as exc:
            raise FileNotFoundError(dest) from exc

    def copy_out(self, path: str) -> bytes:
        try:
            with _engine_errors():
                stream, _ = self._client.api.get_archive(self.container_id, self._abs(path))
                return b"".join(stream)
        except docker.errors.NotFound as exc:
            raise FileNotFoundError(path) from exc

    def diff(self) -> str:
        """Everything changed since the base commit (new files too), as a binary-safe git diff with
        its bytes as git wrote them (`diffs.diff_text`: carriage returns and bytes that are not
        UTF-8 kept; the output travels base64-encoded, as the command channel carries text)."""
        command = f"git add --all && git diff --cached --binary {self.base_commit}"
        result = self.exec(_base64_of(command), timeout=120, output_limit=_DIFF_OUTPUT_LIMIT)
        if result.exit_code != 0:  # the agent broke the workspace's git: evalkit's copy of the base
            result = self._diff_from_base_copy()
        if result.exit_code != 0:
            raise SandboxError(f"git diff failed in the sandbox: {result.stderr.strip()[:200]}")
        if result.truncated:
            raise SandboxError("the diff is larger than the output limit")
        try:
            return diff_text(base64.b64decode(result.stdout, validate=True))
        except binascii.Error:
            raise SandboxError("git diff in the sandbox printed something other than its diff") from None

    def _diff_from_base_copy(self) -> ExecResult:
        """The diff against a root-owned copy of the base repository, nothing of the agent's
        left running (base_git.py)."""
        self.kill_all()
        name = base_git_name()
        self.copy_in(base_git_tar(self._workspace.archive, name), SCRATCH_PARENT)
        command = base_git_diff_command(f"{SCRATCH_PARENT}/{name}", self.workdir, self.base_commit)
        return self.exec(_base64_of(command), timeout=120, output_limit=_DIFF_OUTPUT_LIMIT)

    # -- lifecycle --------------------------------------------------------------------------
    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._drop_channel()
        if self._remove_later is not None:
            self._remove_later(self._remove)
        else:
            self._remove()

    def _remove(self) -> None:
        try:
            remove_container(self._client, self.container_id)
            self._remove_proxy_net()
        except Exception as exc:
            if not docker_engine_unreachable(exc):
                raise
            return  # still tracked in `live`: removed when the backend closes, once the engine answers
        if self._live is not None:
            self._live.discard(self.container_id)
