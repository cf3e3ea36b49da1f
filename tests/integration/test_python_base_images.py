"""A Python base built offline from its Debian suite carries the Python its suite promises, with
pip, venv and distutils usable by the unprivileged agent.
Built once when missing (a few minutes: debootstrap from the host's apt mirror), then reused."""

import pytest

from evalkit.sandbox.docker.images import build_base_image
from evalkit.sandbox.python_bases import base_for_suite

pytestmark = pytest.mark.integration

BULLSEYE = base_for_suite("bullseye")


@pytest.fixture(scope="module")
def bullseye_image(docker_engine):
    return build_base_image(docker_engine, BULLSEYE.image, python_base=BULLSEYE, log=lambda line: None)


def run_in(client, image, command):
    output = client.containers.run(image, command, user="agent", network_disabled=True, remove=True)
    return output.decode().strip()


def test_bullseye_base_runs_python_3_9_as_the_agent(docker_engine, bullseye_image):
    assert run_in(docker_engine, bullseye_image, ["python3", "--version"]).startswith("Python 3.9.")
    assert run_in(docker_engine, bullseye_image, ["python", "--version"]).startswith("Python 3.9.")
    assert run_in(docker_engine, bullseye_image, ["whoami"]) == "agent"


def test_bullseye_base_can_make_pip_environments(docker_engine, bullseye_image):
    script = "python3 -m venv /tmp/env && /tmp/env/bin/pip --version && python3 -c 'import distutils, pytest'"
    output = run_in(docker_engine, bullseye_image, ["bash", "-c", script])
    assert "python 3.9" in output

