"""Images through a registry (`--registry HOST[:PORT][/PREFIX]`) for cluster runs: the driver
resolves a task's image as usual (built from its recipe or its SWE-bench environment, tagged by
content hash) and pushes it as `REGISTRY/<tag>`; a node that lacks the tag pulls it and tags it
back, so it needs neither the recipe, the base image nor the task's repository. Without a
registry a node builds what it lacks from the same recipes (same content hash, same tag)."""

from __future__ import annotations

import contextlib

import docker
import docker.errors

from evalkit.errors import SandboxError


def remote_name(registry: str, tag: str) -> str:
    return f"{registry}/{tag}"


def push_image(client: docker.DockerClient, tag: str, registry: str) -> str:
    """Push local image `tag` as `REGISTRY/tag`; the remote name. Layers the registry has are not sent again."""
    remote = remote_name(registry, tag)
    repository, _, version = remote.rpartition(":")
    try:
        client.images.get(tag).tag(repository, version)
        for event in client.api.push(repository, tag=version, stream=True, decode=True):
            if "error" in event:
                raise SandboxError(f"pushing {tag} to {registry}: {event['error']}")
    except docker.errors.APIError as exc:
        raise SandboxError(f"pushing {tag} to {registry}: {exc.explanation or exc}") from None
    finally:
        _untag(client, remote)
    return remote


def pull_image(client: docker.DockerClient, tag: str, registry: str) -> None:
    """Make local image `tag` from `REGISTRY/tag` (pulled, tagged back, the remote name dropped)."""
    remote = remote_name(registry, tag)
    repository, _, version = remote.rpartition(":")
    try:
        client.images.pull(repository, tag=version).tag(*tag.rsplit(":", 1))
    except docker.errors.APIError as exc:
        raise SandboxError(
            f"image {tag}: not on this node and not pulled from {registry} ({exc.explanation or exc}); "
            "push it from the driver with --registry"
        ) from None
    _untag(client, remote)


def _untag(client: docker.DockerClient, name: str) -> None:
    with contextlib.suppress(docker.errors.APIError):  # not tagged (a failed push), or in use
        client.images.remove(name, noprune=True)
