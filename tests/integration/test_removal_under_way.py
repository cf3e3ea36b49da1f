"""A container whose removal another thread has under way (a closing sandbox's background removal,
met by the run's final sweep) is gone when `remove_container` returns: the engine answers the
second force removal "already in progress" at once, and a run that returned then could leave its
container behind (seen after `--agent qwen-code` runs)."""

import contextlib
import threading

import docker.errors
import pytest

from evalkit.sandbox.docker.containers import remove_container
from evalkit.sandbox.docker.images import BASE_IMAGE

pytestmark = pytest.mark.integration


def remove_quietly(client, container_id: str) -> None:
    """The other removal: whichever of the two the engine answers "already in progress" is fine."""
    with contextlib.suppress(docker.errors.APIError):
        client.api.remove_container(container_id, force=True)


def test_a_removal_already_under_way_is_waited_for(docker_engine):
    client = docker_engine
    for _ in range(5):  # the race is the engine's: try a few containers, each must be gone
        container = client.containers.run(BASE_IMAGE, ["sleep", "infinity"], detach=True, labels={"evalkit.test": "1"})
        other = threading.Thread(target=remove_quietly, args=(client, container.id))
        other.start()
        try:
            remove_container(client, container.id)
            gone = False
            try:
                client.api.inspect_container(container.id)
            except docker.errors.NotFound:
                gone = True
        finally:
            other.join()
        assert gone, "remove_container returned while the container was still there"
