"""Container bookkeeping: labels on every container, the set this process owns, and clean-up.

Every evalkit container carries `evalkit.run_id`, `evalkit.task_id`, `evalkit.owner` (host:pid of
the process that made it) and `evalkit.owner_start` (that process's start time, so that a pid the
system has since given to another process is not taken for the owner). Containers whose owner
process is dead are orphans: `sweep_orphans` removes them at the start of a command; `prune`
removes them on demand, and with `live_too` the containers of live evalkit processes as well.
Networks evalkit makes (a proxied sandbox's, proxy_net.py) carry the same labels and go the same
way, each after its containers.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors

from evalkit.sandbox.docker.engine_errors import docker_engine_unreachable

LABEL_RUN = "evalkit.run_id"
LABEL_TASK = "evalkit.task_id"
LABEL_OWNER = "evalkit.owner"
LABEL_ROLE = "evalkit.role"
LABEL_OWNER_START = "evalkit.owner_start"


def owner_label(pid: int | None = None) -> str:
    """The owner label of process `pid` on this host (default: this process)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def process_start(pid: int) -> str | None:
    """When process `pid` started (clock ticks since boot, from /proc), or None when unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()  # the command name before ")" may hold spaces
    return fields[19] if len(fields) > 19 else None  # field 22 of stat(5); fields[0] is field 3


def container_labels(run_id: str, task_id: str, role: str) -> dict[str, str]:
    """The labels every evalkit container carries."""
    labels = {LABEL_RUN: run_id, LABEL_TASK: task_id, LABEL_OWNER: owner_label(), LABEL_ROLE: role}
    started = process_start(os.getpid())
    if started is not None:
        labels[LABEL_OWNER_START] = started
    return labels


class LiveContainers:
    """The containers (and networks) this process has made and not yet removed.

    On Ctrl-C the main thread calls `remove_all()`; worker threads still using those containers
    then fail fast instead of running on.
    """

    def __init__(self, client: docker.DockerClient) -> None:
        self._client = client
        self._ids: set[str] = set()
        self._networks: set[str] = set()
        self._lock = threading.Lock()

    def add(self, container_id: str) -> None:
        with self._lock:
            self._ids.add(container_id)

    def discard(self, container_id: str) -> None:
        with self._lock:
            self._ids.discard(container_id)

    def add_network(self, network_id: str) -> None:
        with self._lock:
            self._networks.add(network_id)

    def discard_network(self, network_id: str) -> None:
        with self._lock:
            self._networks.discard(network_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)

    def remove_all(self) -> int:
        """Force-remove every tracked container, then every tracked network (free of them by
        then); return how many containers were removed. While the engine does not answer, the rest
        stay tracked for a later call (or the next command's sweep)."""
        removed = self._remove_each(self._ids, lambda i: remove_container(self._client, i))
        if not self._ids:  # a network still holding a container cannot go
            self._remove_each(self._networks, lambda i: remove_network(self._client, i))
        return removed

    def _remove_each(self, tracked: set[str], remove: Callable[[str], None]) -> int:
        """Remove each of `tracked` (emptied); on an engine that does not answer, the rest go back."""
        with self._lock:
            ids = list(tracked)
            tracked.clear()
        for done, one in enumerate(ids):
            try:
                remove(one)
            except Exception as exc:
                with self._lock:
                    tracked.update(ids[done:])
                if docker_engine_unreachable(exc):
                    return done
                raise
        return len(ids)


REMOVAL_WAIT_S = 30.0  # for a removal of the same container already under way elsewhere


def remove_container(client: docker.DockerClient, container_id: str) -> None:
    """Force-remove a container; a container already gone is fine. One whose removal is already
    under way (a closing sandbox's background removal, met by the run's final sweep) is waited for
    until it is gone, so that a run that returns has left no container behind."""
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except docker.errors.NotFound:
        return
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise
        _wait_until_gone(client, container_id, time.monotonic() + REMOVAL_WAIT_S)


def _wait_until_gone(client: docker.DockerClient, container_id: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            client.api.inspect_container(container_id)
        except docker.errors.NotFound:
            return
        time.sleep(0.1)


NETWORK_WAIT_S = 15.0  # for the removal of a network's last containers, already under way elsewhere


def remove_network(client: docker.DockerClient, network_id: str) -> None:
    """Remove one of evalkit's networks, and the containers still on it: on Ctrl-C a worker may be
    creating or removing one (its removal "already in progress", which `remove_container` waits
    for) while the main thread clears up, and the engine refuses a network with active endpoints.
    A network already gone is fine; one still refused after NETWORK_WAIT_S is an error."""
    deadline = time.monotonic() + NETWORK_WAIT_S
    while True:
        try:
            client.api.remove_network(network_id)
            return
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as exc:
            if "active endpoints" not in str(exc) or time.monotonic() >= deadline:
                raise
        try:
            attached = client.api.inspect_network(network_id).get("Containers") or {}
        except docker.errors.NotFound:
            return
        for container_id in attached:
            remove_container(client, container_id)
        time.sleep(0.2)


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that made a container (from its labels) may still be running: true for
    another host's process (not ours to judge) or an unreadable label; false when the pid is gone
    or now belongs to a process started at another time."""
    host, _, pid_text = labels.get(LABEL_OWNER, "").rpartition(":")
    if host != socket.gethostname():
        return True
    try:
        pid = int(pid_text)
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    started, now = labels.get(LABEL_OWNER_START), process_start(pid)
    return started is None or now is None or started == now


@dataclass(frozen=True)
class PrunedContainer:
    id: str
    run_id: str
    task_id: str


@dataclass
class PruneResult:
    removed: list[PrunedContainer] = field(default_factory=list)
    kept: list[PrunedContainer] = field(default_factory=list)  # their owner is alive
    networks: int = 0  # networks removed (a proxied sandbox's), after their containers


def _evalkit_containers(client: docker.DockerClient) -> list[dict]:
    return client.api.containers(all=True, filters={"label": LABEL_RUN})


def prune(client: docker.DockerClient, run_id: str | None = None, live_too: bool = False) -> PruneResult:
    """Remove the evalkit containers (of one run when `run_id` is given) whose owner process is
    dead; with `live_too`, those of live processes (runs in progress) as well.

    Passes repeat until a listing shows none left: a killed owner's last `create` may still be under
    way in the engine, listed (its settings are saved first) but not yet removable (the engine
    answers "no such container"), and it appears for good a moment later."""
    result = PruneResult()
    removed: dict[str, PrunedContainer] = {}
    kept: dict[str, PrunedContainer] = {}
    deadline = time.monotonic() + REMOVAL_WAIT_S
    while True:
        pending = 0
        for info in _evalkit_containers(client):
            labels = info.get("Labels") or {}
            if run_id and labels.get(LABEL_RUN) != run_id:
                continue
            container = PrunedContainer(info["Id"][:12], labels.get(LABEL_RUN, ""), labels.get(LABEL_TASK, ""))
            if not live_too and owner_alive(labels):
                kept[info["Id"]] = container
                continue
            remove_container(client, info["Id"])
            removed[info["Id"]] = container
            pending += 1
        if not pending or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    result.removed, result.kept = list(removed.values()), list(kept.values())
    for info in client.api.networks(filters={"label": LABEL_RUN}):
        labels = info.get("Labels") or {}
        if (run_id and labels.get(LABEL_RUN) != run_id) or (not live_too and owner_alive(labels)):
            continue
        remove_network(client, info["Id"])
        result.networks += 1
    return result


def remove_run_containers(client: docker.DockerClient, run_id: str) -> int:
    """Remove every container (then network) of run `run_id` this process made, tracked or not
    (an engine that restarted mid-run leaves some whose creation was never confirmed); return how
    many containers. Nothing is removed, and no error raised, while the engine does not answer."""
    labels = [f"{LABEL_RUN}={run_id}", f"{LABEL_OWNER}={owner_label()}"]
    removed = 0
    try:
        for info in client.api.containers(all=True, filters={"label": labels}):
            remove_container(client, info["Id"])
            removed += 1
        for info in client.api.networks(filters={"label": labels}):
            remove_network(client, info["Id"])
    except Exception as exc:
        if not docker_engine_unreachable(exc):
            raise
    return removed


def sweep_orphans(client: docker.DockerClient) -> list[PrunedContainer]:
    """Remove every evalkit container (and network) whose owner process on this host has died."""
    return prune(client).removed
