"""Container bookkeeping: labels on every container, the set this process owns, and clean-up.

Every evalkit container carries `evalkit.run_id`, `evalkit.task_id` and `evalkit.owner`
(host:pid of the process that made it). Containers whose owner process is dead are orphans:
`sweep_orphans` removes them at the start of a run; `prune` removes leftovers on demand.
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass

import docker
import docker.errors

LABEL_RUN = "evalkit.run_id"
LABEL_TASK = "evalkit.task_id"
LABEL_OWNER = "evalkit.owner"
LABEL_ROLE = "evalkit.role"


def owner_label(pid: int | None = None) -> str:
    """The owner label of process `pid` on this host (default: this process)."""
    return f"{socket.gethostname()}:{os.getpid() if pid is None else pid}"


def container_labels(run_id: str, task_id: str, role: str) -> dict[str, str]:
    """The labels every evalkit container carries."""
    return {LABEL_RUN: run_id, LABEL_TASK: task_id, LABEL_OWNER: owner_label(), LABEL_ROLE: role}


class LiveContainers:
    """The containers this process has started and not yet removed.

    On Ctrl-C the main thread calls `remove_all()`; worker threads still using those containers
    then fail fast instead of running on.
    """

    def __init__(self, client: docker.DockerClient) -> None:
        self._client = client
        self._ids: set[str] = set()
        self._lock = threading.Lock()

    def add(self, container_id: str) -> None:
        with self._lock:
            self._ids.add(container_id)

    def discard(self, container_id: str) -> None:
        with self._lock:
            self._ids.discard(container_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._ids)

    def remove_all(self) -> int:
        """Force-remove every tracked container; return how many were removed."""
        with self._lock:
            ids, self._ids = list(self._ids), set()
        for container_id in ids:
            remove_container(self._client, container_id)
        return len(ids)


def remove_container(client: docker.DockerClient, container_id: str) -> None:
    """Force-remove a container; a container already gone is fine."""
    try:
        client.api.remove_container(container_id, force=True, v=True)
    except docker.errors.NotFound:
        pass
    except docker.errors.APIError as exc:
        if "already in progress" not in str(exc):
            raise


def _owner_alive(owner: str) -> bool:
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname():
        return True  # another machine's container on a shared engine: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, ValueError):
        return True
    return True


@dataclass(frozen=True)
class PrunedContainer:
    id: str
    run_id: str
    task_id: str


def _evalkit_containers(client: docker.DockerClient) -> list[dict]:
    return client.api.containers(all=True, filters={"label": LABEL_RUN})


def sweep_orphans(client: docker.DockerClient) -> list[PrunedContainer]:
    """Remove evalkit containers whose owner process on this host has died."""
    removed = []
    for info in _evalkit_containers(client):
        labels = info.get("Labels") or {}
        if _owner_alive(labels.get(LABEL_OWNER, "")):
            continue
        remove_container(client, info["Id"])
        removed.append(PrunedContainer(info["Id"][:12], labels.get(LABEL_RUN, ""), labels.get(LABEL_TASK, "")))
    return removed


def prune(client: docker.DockerClient, run_id: str | None = None) -> list[PrunedContainer]:
    """Remove evalkit containers (of one run when `run_id` is given), live owners or not."""
    removed = []
    for info in _evalkit_containers(client):
        labels = info.get("Labels") or {}
        if run_id and labels.get(LABEL_RUN) != run_id:
            continue
        remove_container(client, info["Id"])
        removed.append(PrunedContainer(info["Id"][:12], labels.get(LABEL_RUN, ""), labels.get(LABEL_TASK, "")))
    return removed
