"""`--registry` on a real cluster whose only worker node has an engine of its own, empty: no base
image, no recipe image, no suite folder. The driver builds the task's image on the shared engine
and pushes it to a real registry (Debian's `docker-registry`, the CNCF distribution registry);
the node pulls it and the attempt resolves. Without the registry the same node cannot make the
image and says so in one line. The private engine lives in a network namespace of its own
(tests/private_engine.py); a second registry process serves the same storage inside it, so the
node's engine pulls from 127.0.0.1 as a node of a real cluster pulls from the registry's host."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
from agent_runs import rows_of
from conftest import DEMO_SUITE, run_evalkit
from private_engine import PrivateEngine

from evalkit.runs.attempt import AGENT_ROLE
from evalkit.sandbox.docker.backend import DockerBackend
from evalkit.sandbox.docker.containers import LABEL_RUN
from evalkit.sandbox.docker.images import BASE_IMAGE
from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration

TASK = "kvstore-ttl"
AGENT = "mini-swe-agent"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def serve_registry(config: Path, storage: Path, port: int, netns_of: int | None = None) -> subprocess.Popen:
    """`docker-registry serve` on 127.0.0.1:`port` over `storage` (in the network namespace of
    process `netns_of` when given); returns once it answers."""
    config.write_text(
        f"version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {storage}\n"
        f"http:\n  addr: 127.0.0.1:{port}\n"
    )
    command = ["docker-registry", "serve", str(config)]
    if netns_of is not None:
        inside = ["nsenter", f"--net=/proc/{netns_of}/ns/net"]
        subprocess.run([*inside, "ip", "link", "set", "lo", "up"], check=True)  # a new namespace's loopback is down
        command = [*inside, *command]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    probe = ["curl", "-sf", f"http://127.0.0.1:{port}/v2/"]
    if netns_of is not None:
        probe = ["nsenter", f"--net=/proc/{netns_of}/ns/net", *probe]
    deadline = time.monotonic() + 30
    while subprocess.run(probe, capture_output=True).returncode != 0:
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"docker-registry on 127.0.0.1:{port} did not answer")
        time.sleep(0.2)
    return process


@pytest.fixture(scope="module")
def registry_cluster(docker_engine, tmp_path_factory):
    """A registry on this host; a private engine with the same registry inside its namespace; a
    Ray head offering no sandbox and one node offering one, on the private engine."""
    if shutil.which("docker-registry") is None:
        if os.environ.get("CI"):
            pytest.fail("CI needs docker-registry: make test installs it (apt-get install docker-registry)")
        pytest.skip("docker-registry is not installed (apt-get install docker-registry)")
    reason = PrivateEngine.unavailable()
    if reason:
        pytest.skip(reason)
    from ray.cluster_utils import Cluster

    root = tmp_path_factory.mktemp("registry")
    port = free_port()
    engine = PrivateEngine()
    ray_dir = Path(tempfile.mkdtemp(prefix="rr-", dir="/tmp"))
    processes: list[subprocess.Popen] = []
    variables = pytest.MonkeyPatch()
    cluster = None
    try:
        processes.append(serve_registry(root / "host.yml", root / "storage", port))
        engine.start()
        processes.append(serve_registry(root / "node.yml", root / "storage", port, netns_of=engine._process.pid))
        variables.setenv("RAY_TMPDIR", str(ray_dir))
        variables.setenv("RAY_USAGE_STATS_ENABLED", "0")
        cluster = Cluster(
            initialize_head=True,
            head_node_args={"num_cpus": 1, "object_store_memory": 80_000_000, "include_dashboard": False},
        )
        cluster.add_node(  # the node's workers use the private engine
            num_cpus=1, object_store_memory=80_000_000, resources={"sandbox": 1}, env_vars={"DOCKER_HOST": engine.host}
        )
        cluster.wait_for_nodes()
        yield cluster.address, f"127.0.0.1:{port}/ek", engine
    finally:
        if cluster is not None:
            cluster.shutdown()
        for process in processes:
            process.kill()
            process.wait()
        engine.destroy()
        variables.undo()
        shutil.rmtree(ray_dir, ignore_errors=True)


@pytest.fixture
def marked_suite(tmp_path):
    """One demo task whose image is a recipe of the suite, unique to this test (so no engine has it)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for name in ("suite.toml", "repos", TASK):
        source = Path(DEMO_SUITE) / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, suite / name)
    recipe = suite / TASK / "env-marked"
    recipe.mkdir()
    marker = f"{time.time_ns()}"
    (recipe / "Dockerfile").write_text(f"ARG BASE_IMAGE\nFROM ${{BASE_IMAGE}}\nRUN echo {marker} > /etc/marker\n")
    task_file = suite / TASK / "task.toml"
    task_file.write_text(
        task_file.read_text().replace('language = "python"\n', 'language = "python"\nimage = "./env-marked"\n', 1)
    )
    return suite


def images_of(engine: PrivateEngine) -> set[str]:
    client = engine.client()
    try:
        return {tag for image in client.images.list() for tag in image.tags}
    finally:
        client.close()


def test_a_node_with_an_empty_engine_runs_the_task_from_the_registry(registry_cluster, marked_suite, tmp_path):
    address, registry, engine = registry_cluster
    assert not images_of(engine)  # nothing there: no base, no task image
    common = ["--suite", marked_suite, "--model", "oracle", "--out", tmp_path, "--executor", "ray",
              "--ray-address", address, "--no-preflight"]  # fmt: skip

    without = run_evalkit("run", *common, "--run-id", "no-registry")
    (row,) = rows_of(tmp_path / "no-registry")
    assert row["resolved"] is False and row["stop_reason"] in {"sandbox_error", "environment_error"}
    assert f"base image {BASE_IMAGE} is missing" in row["error"] and "\n" not in row["error"], row["error"]
    assert without.returncode != 0

    result = run_evalkit("run", *common, "--run-id", "with-registry", "--registry", registry)
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "with-registry")
    assert row["resolved"] is True, row
    assert row["node"] and row["node"].startswith(socket.gethostname())
    pulled = {tag for tag in images_of(engine) if tag.startswith("evalkit/env-marked:")}
    assert len(pulled) == 1, images_of(engine)  # pulled and tagged back as the driver named it
    assert BASE_IMAGE not in images_of(engine)  # pulled, not built: the node never had the base
    catalog = json.loads(subprocess.run(["curl", "-sf", f"http://{registry.split('/')[0]}/v2/_catalog"],
                                        capture_output=True, text=True, check=True).stdout)  # fmt: skip
    assert "ek/evalkit/env-marked" in catalog["repositories"]
    assert engine.containers(f"{LABEL_RUN}=with-registry") == []
    assert engine.containers(f"{LABEL_RUN}=no-registry") == []


def test_a_malformed_registry_or_one_without_a_cluster_is_one_line(tmp_path):
    bad = run_evalkit("run", "--model", "oracle", "--out", tmp_path, "--executor", "ray", "--registry", "http://x/")
    assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
        "error: --registry http://x: give HOST[:PORT][/PREFIX], e.g. registry.example.com:5000/evalkit"
    ], bad.stderr
    local = run_evalkit("run", "--model", "oracle", "--out", tmp_path, "--registry", "127.0.0.1:5000")
    assert local.returncode == 2 and local.stderr.strip().splitlines() == [
        "error: --registry 127.0.0.1:5000: images go through a registry for --executor ray only"
    ], local.stderr
    assert not any(tmp_path.iterdir())



def test_an_installed_agents_image_reaches_an_empty_node_through_the_registry(registry_cluster, marked_suite, tmp_path):
    """--agent mini-swe-agent with --registry: the driver builds the agent's own image once and
    pushes it; the node pulls it instead of building it from its recipe (which needs the base
    image and PyPI), and layers it onto the task image it pulled.

    The private engine has no bridge network, so the attempt cannot reach the node's model proxy
    and ends there, saying so in one line (a node of a real cluster has one): what this test checks
    is that it got past the agent's image, and that a sandbox of the layered image on that engine
    has the agent."""
    address, registry, engine = registry_cluster
    before = images_of(engine)  # the module's other test may have pulled a task image of its own
    result = run_evalkit("run", "--suite", marked_suite, "--model", "oracle", "--agent", AGENT, "--out", tmp_path,
                         "--executor", "ray", "--ray-address", address, "--no-preflight", "--registry", registry,
                         "--run-id", "agent-registry", timeout=1500)  # fmt: skip
    (row,) = rows_of(tmp_path / "agent-registry")
    assert "base image" not in row["error"] and AGENT not in row["error"], (row["error"], result.stderr[-2000:])
    assert "the Docker engine has no default bridge network" in row["error"]  # as said on such an engine
    images = images_of(engine)
    (agent_image,) = [tag for tag in images - before if tag.startswith(f"evalkit/agent-{AGENT}:")]
    (task_image,) = [tag for tag in images - before if tag.startswith("evalkit/env-marked:")]
    assert BASE_IMAGE not in images

    task = next(t for t in load_suite(marked_suite).tasks if t.id == TASK)
    client = engine.client()
    backend = DockerBackend(client, run_id="agent-layer-on-node")
    try:
        backend.adopt_image(task, task_image, registry)
        backend.adopt_layer(AGENT, agent_image, registry)
        with backend.open(task, role=AGENT_ROLE, layer=AGENT) as box:
            root = f"/opt/evalkit-agents/{AGENT}"
            probe = f"import sys; sys.path.insert(0, '{root}/lib'); import minisweagent"
            quiet = "MSWEA_SILENT_STARTUP=1 MSWEA_GLOBAL_CONFIG_DIR=/tmp/m"
            found = box.exec(f"{quiet} {root}/runtime/bin/python3 -c {shlex.quote(probe)}")
            assert found.exit_code == 0, found.stderr
    finally:
        backend.close()
        client.close()
    assert BASE_IMAGE not in images_of(engine)  # layered on the node without the base
    assert engine.containers(f"{LABEL_RUN}=agent-registry") == []
