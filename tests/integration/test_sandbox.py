"""The Docker sandbox's own safety promises (user, labels, caps, pids), checked against the real
engine, for a sandbox opened when asked and one a pool made ahead; what every backend promises
(network, files, diff, ...) is in test_backend_conformance.py."""

import time

import pytest

from evalkit.sandbox.docker.backend import DockerBackend
from evalkit.sandbox.docker.containers import LABEL_OWNER, LABEL_ROLE, LABEL_RUN, LABEL_TASK, owner_label
from evalkit.sandbox.protocol import SandboxRequest

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=["opened", "made ahead"])
def sandbox(request, toy_task, backend, docker_engine):
    source = backend
    if request.param == "made ahead":  # by the pool of a backend of the same run, told it comes
        source = DockerBackend(docker_engine, run_id=backend.run_id)
        source.prepare([SandboxRequest(toy_task, "agent")], capacity=1)
    box = source.open(toy_task, role="agent")
    assert source.pool is None or source.pool.counts.handed == 1
    yield box
    box.close()
    if source is not backend:
        source.close()
        assert len(source.live) == 0


def test_commands_run_as_an_unprivileged_user_in_the_workspace(sandbox):
    result = sandbox.exec("id -u; pwd; grep CapEff /proc/self/status")
    uid, cwd, caps = result.stdout.splitlines()
    assert uid == "1000" and cwd == "/workspace"
    assert caps.split()[1] == "0000000000000000"


def test_container_is_labelled_and_capped(sandbox, backend, docker_engine):
    info = docker_engine.api.inspect_container(sandbox.container_id)
    labels, host = info["Config"]["Labels"], info["HostConfig"]
    assert labels[LABEL_RUN] == backend.run_id and labels[LABEL_TASK] == "calc-power"
    assert labels[LABEL_OWNER] == owner_label() and labels[LABEL_ROLE] == "agent"
    assert host["NetworkMode"] == "none" and host["CapDrop"] == ["ALL"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == 256 and host["Memory"] == 2 * 1024**3 and host["NanoCpus"] == 1_000_000_000


def test_command_over_its_timeout_is_killed(sandbox):
    started = time.monotonic()
    result = sandbox.exec("sleep 100; echo finished", timeout=1)
    assert result.timed_out and result.exit_code == 124
    assert time.monotonic() - started < 10
    assert sandbox.exec("pgrep -u agent -x sleep || echo none").stdout.strip() == "none"


def test_20_mb_of_output_is_truncated_inside_the_container(sandbox):
    started = time.monotonic()
    result = sandbox.exec("head -c 20000000 /dev/zero | tr '\\0' x")
    assert result.truncated and result.exit_code == 0
    assert len(result.stdout) < sandbox.spec.output_limit + 200
    assert time.monotonic() - started < 10


def test_fork_bomb_is_contained_by_the_pids_limit(toy_task, backend, docker_engine):
    with backend.open(toy_task, role="agent") as box:
        box.exec(":(){ :|:& };:", timeout=3)
        stats = docker_engine.api.stats(box.container_id, stream=False)
        assert stats["pids_stats"]["current"] <= 256
        box.kill_all()
        assert box.exec("echo recovered", timeout=20).stdout == "recovered\n"


def test_close_removes_the_container(toy_task, backend, docker_engine):
    box = backend.open(toy_task, role="agent")
    container_id = box.container_id
    box.close()
    box.close()
    assert not docker_engine.containers.list(all=True, filters={"id": container_id})
