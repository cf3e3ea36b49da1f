"""The Docker backend: opens `DockerSandbox`es for a run (registered as `docker` in
`evalkit.sandbox.backend_table`), and the Docker client and engine ping it uses."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import docker
import docker.errors
import docker.utils

from evalkit.errors import SandboxError
from evalkit.sandbox.docker.agent_images import agent_image, layered_image
from evalkit.sandbox.docker.containers import LABEL_RUN, LiveContainers, remove_run_containers, sweep_orphans
from evalkit.sandbox.docker.docker_sandbox import DockerSandbox, SandboxSpec
from evalkit.sandbox.docker.engine_errors import docker_unreachable
from evalkit.sandbox.docker.images import image_exists, resolve_image
from evalkit.sandbox.docker.proxy_net import host_gateway
from evalkit.sandbox.docker.registry_images import pull_image, push_image
from evalkit.sandbox.docker.task_env import environment_image
from evalkit.sandbox.egress import Egress, ProxyRoute
from evalkit.sandbox.engine_watch import EngineWatch
from evalkit.sandbox.env_choice import TaskEnvironment, task_environment
from evalkit.sandbox.pool import SandboxPool
from evalkit.sandbox.protocol import SandboxRequest
from evalkit.sandbox.workspace import Workspace, Workspaces, default_repo_cache
from evalkit.tasks.model import Task
from evalkit.wording import counted

__all__ = ["DockerBackend", "docker_client", "engine_ping"]


def docker_client() -> docker.DockerClient:
    """A client for the engine named by DOCKER_HOST (or the local socket), or one clear error."""
    try:
        client = docker.from_env(timeout=120)
        client.ping()
    except docker.errors.DockerException as exc:
        reason = str(exc).split("(")[0].strip()
        raise SandboxError(
            f"no Docker engine answers ({reason}); start dockerd or set DOCKER_HOST (`make setup` does it on Debian)"
        ) from None
    return client


PING_TIMEOUT_S = 10.0
BUILD_NOTE_S = 5.0  # an environment that took longer than this to resolve was built: say so


def engine_ping(client: docker.DockerClient) -> Callable[[], bool]:
    """A ping of the engine DOCKER_HOST names (the one `docker_client()` reaches) over a connection
    of its own, closed after: an engine shutting down refuses new connections at once but, for a
    while, still answers on those it has, so a ping through the shared pool would say it is up."""
    version = client.api.api_version

    def ping() -> bool:
        api = docker.APIClient(version=version, timeout=PING_TIMEOUT_S, **docker.utils.kwargs_from_env())
        try:
            return api.ping()
        finally:
            api.close()

    return ping


class DockerBackend:
    """Opens `DockerSandbox`es for tasks, caching images and workspaces per process.

    Every container it opens is tracked in `live`, so `close()` (or Ctrl-C in the CLI) removes
    whatever is still running. `engine` tells whether the engine answers (a run watches it).
    After `prepare`, a `SandboxPool` makes the sandboxes asked for ahead of need (tracked in `live`
    like any other) and closed ones are removed in the background; `close()` drains the pool.
    """

    def __init__(
        self,
        client: docker.DockerClient,
        run_id: str,
        spec: SandboxSpec | None = None,
        log: Callable[[str], None] = lambda _: None,
        cache: Path | None = None,
        proxy: ProxyRoute | None = None,
    ) -> None:
        self.client = client
        self.proxy = proxy  # the run's model proxy, for `egress="proxy"`: set once it listens
        self._log = log
        self._cache = cache or default_repo_cache().parent
        self.run_id = run_id
        self.live = LiveContainers(client)
        self.engine = EngineWatch(engine_ping(client), unreachable=docker_unreachable)
        self._template = spec or SandboxSpec(image="")
        self._images: dict[str, str | SandboxError] = {}
        self._build_lock = threading.Lock()  # builds one at a time; tasks of images already known go on
        self._workspaces = Workspaces()
        self._lock = threading.Lock()
        self.pool: SandboxPool[DockerSandbox] | None = None

    @classmethod
    def connect(cls, run_id: str, log: Callable[[str], None]) -> DockerBackend:
        """The backend table's factory: a client for the engine, and the containers of dead evalkit
        runs removed first (said through `log`)."""
        client = docker_client()
        swept = sweep_orphans(client)
        if swept:
            log(f"removed {counted(len(swept), 'container')} left by dead evalkit runs")
        return cls(client, run_id, log=log)

    def _image_key(self, task: Task) -> str:
        env = task_environment(task)
        return f"{env.spec.repo} {env.spec.version} {env.setup_commit}" if env else task.image

    def publish_image(self, task: Task, registry: str) -> str:
        """The task's image, resolved (built when missing) and pushed to `registry` once per run;
        its tag, for nodes to pull."""
        return self._pushed(self.image(task), registry)

    def adopt_image(self, task: Task, tag: str, registry: str) -> None:
        """Use `tag` as the task's image; pulled from `registry` when this engine lacks it."""
        self._pulled(tag, registry)
        with self._lock:
            self._images[self._image_key(task)] = tag

    def publish_layer(self, layer: str, registry: str) -> str:
        """The installed agent's own image, built when missing and pushed to `registry` once per run."""
        return self._pushed(self._agent_image(layer), registry)

    def adopt_layer(self, layer: str, tag: str, registry: str) -> None:
        """Use `tag` as the installed agent's own image (no recipe build, no base image needed);
        pulled from `registry` when this engine lacks it."""
        self._pulled(tag, registry)
        with self._build_lock:
            self._images[f"agent {layer}"] = tag

    def _pushed(self, tag: str, registry: str) -> str:
        """`tag` pushed to `registry`, once per run."""
        key = f"pushed {tag} to {registry}"
        with self._build_lock:
            if key not in self._images:
                push_image(self.client, tag, registry)
                self._images[key] = tag
        return tag

    def _pulled(self, tag: str, registry: str) -> None:
        with self._build_lock:
            if not image_exists(self.client, tag):
                pull_image(self.client, tag, registry)

    def image(self, task: Task) -> str:
        """The task's image: its SWE-bench environment (built once per version), else its `image`.
        A build that failed is not tried again in this run: its error stands for every task of it.
        While an image builds, tasks whose image is known go on (gather validates side by side)."""
        key = self._image_key(task)
        with self._lock:
            found = self._images.get(key)
        if found is None:
            found = self._build(key, task, task_environment(task))
        if isinstance(found, SandboxError):
            raise found
        return found

    def _build(self, key: str, task: Task, env: TaskEnvironment | None) -> str | SandboxError:
        """The image of `key`, built unless another thread did while this one waited its turn."""
        with self._build_lock:
            if key not in self._images:
                started = time.monotonic()
                try:
                    if env is None:
                        self._images[key] = resolve_image(self.client, task.image)
                    else:
                        self._images[key] = environment_image(self.client, task, self._cache, self._log)
                except SandboxError as exc:
                    self._images[key] = exc
                if env is not None and time.monotonic() - started > BUILD_NOTE_S:
                    outcome = "failed" if isinstance(self._images[key], SandboxError) else "built"
                    self._log(f"environment of {env.spec.repo} {env.spec.version}: {outcome} "
                              f"in {time.monotonic() - started:.0f} s")
            with self._lock:
                return self._images[key]

    def prepare_layer(self, layer: str) -> None:
        self._agent_image(layer)

    def _agent_image(self, layer: str) -> str:
        """The installed agent's own image, built once per run (a failure stands for the run)."""
        key = f"agent {layer}"
        with self._build_lock:
            if key not in self._images:
                started = time.monotonic()
                try:
                    self._images[key] = agent_image(self.client, layer, self._cache / "wheels")
                except SandboxError as exc:
                    self._images[key] = exc
                if time.monotonic() - started > BUILD_NOTE_S:
                    outcome = "failed" if isinstance(self._images[key], SandboxError) else "built"
                    self._log(f"installed agent {layer}: {outcome} in {time.monotonic() - started:.0f} s")
            found = self._images[key]
        if isinstance(found, SandboxError):
            raise found
        return found

    def layered(self, task: Task, layer: str) -> str:
        """The task's image with installed agent `layer` copied in (made once per task image)."""
        task_image, built = self.image(task), self._agent_image(layer)
        key = f"{task_image} with {layer}"
        with self._lock:
            found = self._images.get(key)
        if found is None:
            try:
                found = layered_image(self.client, task_image, layer, built)
            except SandboxError as exc:
                found = exc
            with self._lock:
                self._images[key] = found
        if isinstance(found, SandboxError):
            raise found
        return found

    def proxy_host(self) -> str:
        return host_gateway(self.client)

    def workspace(self, task: Task) -> Workspace:
        return self._workspaces.of(task)

    def adopt_workspace(self, task: Task, workspace: Workspace) -> None:
        self._workspaces.adopt(task, workspace)

    def open(
        self, task: Task, role: str, network: bool = False, egress: Egress | None = None, layer: str | None = None
    ) -> DockerSandbox:
        request = SandboxRequest(task, role, network, egress=egress, layer=layer)
        pooled = self.pool.take(request) if self.pool is not None else None
        return pooled if pooled is not None else self._make(request)

    def prepare(self, requests: Sequence[SandboxRequest], capacity: int) -> None:
        if capacity < 1 or not requests:
            return
        with self._lock:
            if self.pool is None:
                self.pool = SandboxPool(self._make, capacity, lambda: self.engine.outages, self._engine_known_up)
        self.pool.plan(requests)

    def _engine_known_up(self) -> None:
        """Wait while the engine is known to be down (without asking it); raise once given up."""
        if self.engine.down_for() is not None:
            self.engine.wait_until_up()

    def _make(self, request: SandboxRequest) -> DockerSandbox:
        if not self.client:
            raise SandboxError("backend is closed")
        task = request.task
        spec = SandboxSpec(
            image=self.image(task) if request.layer is None else self.layered(task, request.layer),
            workdir=self._template.workdir,
            network=request.network,
            egress=request.egress,
            proxy=self.proxy,
            mem_limit=self._template.mem_limit,
            cpus=self._template.cpus,
            pids_limit=self._template.pids_limit,
            output_limit=self._template.output_limit,
            default_timeout_s=task.limits.command_timeout_s,
            env=self._template.env,
        )
        pool = self.pool
        return DockerSandbox(
            self.client,
            spec,
            self.workspace(task),
            run_id=self.run_id,
            task_id=task.id,
            role=request.role,
            live=self.live,
            remove_later=pool.later if pool is not None else None,
        )

    def close(self) -> int:
        """Remove every container still open or made ahead (removals under way finished first),
        and after the engine stopped answering at some point, every container of the run this
        process made; return how many were removed.
        Attempts waiting for the engine give up. While the engine does not answer nothing can be
        removed: what is left is swept by the next evalkit command."""
        self.engine.stop()
        removed = self.pool.close() if self.pool is not None else 0
        removed += self.live.remove_all()
        if self.engine.outages:
            removed += remove_run_containers(self.client, self.run_id)
        return removed

    def remaining(self) -> list[str]:
        """The run's containers, and its networks (a proxied sandbox's)."""
        label = {"label": f"{LABEL_RUN}={self.run_id}"}
        found = self.client.api.containers(all=True, filters=label) + self.client.api.networks(filters=label)
        return [info["Id"] for info in found]
