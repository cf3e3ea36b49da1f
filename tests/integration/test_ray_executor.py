"""`evalkit run --executor ray` on a real two-node Ray cluster on this machine, against the real
Docker engine: the demo suite gives the rows a local run gives and spreads over both nodes; an
API key set in the nodes' variables reaches the attempts and no log, row or trajectory; a
driver killed mid-run resumes with `evalkit run --run-id X` alone; a node without an engine ends
its attempts as one line naming it while the others resolve; a driver without an engine runs,
validates, gathers and evaluates on the cluster; a node killed mid-attempt has that attempt run again
elsewhere, with no row lost or doubled and no container left. The node-death test runs last: it
takes the second node away.

The cluster is `ray.cluster_utils.Cluster` in this process (it knows its own processes, so the
teardown kills them by pid; never `ray stop`, which stops every cluster of the machine), under a
temp dir of its own (RAY_TMPDIR: its sessions, sockets and address file), with node death
detected in 1.5 s instead of 15 s. evalkit runs as a subprocess given the cluster's address."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from agent_runs import assert_nothing_left, rows_of
from conftest import DEMO_SUITE, EVALKIT, run_evalkit
from shop_repo import EXPECTED_REJECTIONS, EXPECTED_TASK_SUBJECTS, build_shop_repo

from evalkit.sandbox.docker.containers import LABEL_OWNER, LABEL_ROLE, LABEL_RUN, LABEL_TASK
from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration

PROBE_ENV = "EVALKIT_PROBE_KEY"
NODE_MEMORY = {"num_cpus": 1, "object_store_memory": 80_000_000}
# what may differ between a row run on a node and the same attempt run locally
PLACE_AND_TIME = {"run_id", "node", "started_at", "finished_at", "duration_s", "agent_s", "model_time_s",
                  "sandbox_time_s", "test_time_s"}  # fmt: skip


@dataclass
class RayCluster:
    cluster: Any  # ray.cluster_utils.Cluster
    second: Any  # the second node (ray._private.node.Node), the one the tests take away
    temp_dir: Path
    secret: str

    @property
    def address(self) -> str:
        return self.cluster.address

    def name_of(self, node: Any) -> str:
        """A node as evalkit's rows name it (`node` field, and the one line of a failure there)."""
        return f"{socket.gethostname()}/{node.node_id[:12]}"

    @property
    def both(self) -> set[str]:
        return {self.name_of(self.cluster.head_node), self.name_of(self.second)}

    def raylet_pid(self, node: Any) -> int:
        return node.all_processes["raylet"][0].process.pid

    def crash(self, node: Any) -> None:
        """`node` gone as with its machine: its raylet frozen (so its workers hear nothing), its
        workers SIGKILLed (no attempt's `finally` removes its containers), then every process of
        the node SIGKILLed. (A raylet SIGKILLed alone lets its workers clean up on the way out.)"""
        raylet = self.raylet_pid(node)
        os.kill(raylet, signal.SIGSTOP)
        for pid in children_of(raylet):
            os.kill(pid, signal.SIGKILL)
        self.cluster.remove_node(node, allow_graceful=False)


def parent_of(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except (OSError, ValueError):
        return None


def children_of(pid: int) -> list[int]:
    return [int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit() and parent_of(int(p.name)) == pid]


def processes_under(temp_dir: Path) -> list[int]:
    """Every live process whose command line names `temp_dir`: the cluster's own (raylets, GCS,
    agents, workers all carry their session folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if str(temp_dir).encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def ray_cluster(docker_engine):
    """A head and a second node (marker resource `node2`), one `sandbox` each; the nodes inherit
    a probe key that only their variables hold."""
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail("CI needs Ray: make test installs it (pip install '.[ray]')")
        pytest.skip("Ray is not installed: pip install 'evalkit[ray]'")
    temp_dir = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # short: Ray's socket paths have a length limit
    secret = f"probe-{secrets.token_hex(16)}"
    env = {"RAY_TMPDIR": str(temp_dir), "RAY_USAGE_STATS_ENABLED": "0", PROBE_ENV: secret}
    variables = pytest.MonkeyPatch()
    for name, value in env.items():
        variables.setenv(name, value)
    cluster = None
    try:
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                **NODE_MEMORY,
                "resources": {"sandbox": 1},
                "include_dashboard": False,
                "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 3},
            },
        )
        second = cluster.add_node(**NODE_MEMORY, resources={"sandbox": 1, "node2": 1})
        cluster.wait_for_nodes()
        assert processes_under(temp_dir), "the cluster's processes name its temp dir"  # what teardown checks
        yield RayCluster(cluster, second, temp_dir, secret)
    finally:
        if cluster is not None:
            cluster.shutdown()  # kills its nodes' processes by pid, the head last
        deadline = time.monotonic() + 10  # workers exit once their raylet is gone
        while (left := processes_under(temp_dir)) and time.monotonic() < deadline:
            time.sleep(0.2)
        variables.undo()
        shutil.rmtree(temp_dir, ignore_errors=True)
        assert left == [], f"Ray processes of the test cluster left: {left}"


def ray_run(cluster: RayCluster, *args: Any, timeout: float = 600) -> subprocess.CompletedProcess:
    return run_evalkit("run", *args, "--executor", "ray", "--ray-address", cluster.address, timeout=timeout)


def started_in_background(cluster: RayCluster, out: Path, *args: Any) -> subprocess.Popen:
    """`evalkit run --executor ray` left running; its output in `out`/`evalkit.log`."""
    log = (out / "evalkit.log").open("w")
    argv = [EVALKIT, "run", *map(str, args), "--out", str(out), "--executor", "ray", "--ray-address", cluster.address]
    return subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)


def wait_for(condition, what: str, timeout: float = 120) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def keyed(rows: list[dict]) -> dict[tuple, dict]:
    return {(r["task_id"], r["model"], r["sample"]): r for r in rows}


@pytest.fixture(scope="module")
def demo_runs(ray_cluster, tmp_path_factory):
    """The demo suite with oracle and null, once through the cluster and once on this machine."""
    out = tmp_path_factory.mktemp("ray-demo")
    common = ["--suite", DEMO_SUITE, "--model", "oracle", "--model", "null", "--out", out, "--concurrency", "2"]
    on_ray = ray_run(ray_cluster, *common, "--run-id", "on-ray")
    local = run_evalkit("run", *common, "--run-id", "local", "--executor", "local")
    return on_ray, local, out


def test_the_demo_on_two_nodes_gives_the_rows_of_a_local_run(demo_runs, demo_suite):
    on_ray, local, out = demo_runs
    assert on_ray.returncode == 0, on_ray.stderr[-3000:]
    assert local.returncode == 0, local.stderr[-3000:]
    rows, local_rows = keyed(rows_of(out / "on-ray")), keyed(rows_of(out / "local"))
    assert len(rows) == len(rows_of(out / "on-ray")) == 16  # one row per attempt, none doubled
    task_ids = sorted(t.id for t in demo_suite.tasks)
    for model, resolved in (("oracle", True), ("null", False)):
        mine = [r for r in rows.values() if r["model"] == model]
        assert sorted(r["task_id"] for r in mine) == task_ids
        assert [r["task_id"] for r in mine if r["resolved"] is not resolved] == []
    assert rows.keys() == local_rows.keys()
    for key, row in rows.items():
        same = {f: v for f, v in row.items() if f not in PLACE_AND_TIME}
        assert same == {f: v for f, v in local_rows[key].items() if f not in PLACE_AND_TIME}, key
    assert "100.0%" in on_ray.stdout and "0.0%" in on_ray.stdout


def test_attempts_spread_over_both_nodes_and_each_row_has_its_trajectory(demo_runs, ray_cluster):
    _, local, out = demo_runs
    rows = rows_of(out / "on-ray")
    assert {r["node"] for r in rows} == ray_cluster.both
    assert {r["node"] for r in rows_of(out / "local")} == {None}
    for row in rows:
        events = [json.loads(line) for line in (out / "on-ray" / row["trajectory"]).read_text().splitlines()]
        assert events[0]["type"] == "start" and events[-1]["type"] == "integrity", row["trajectory"]
        assert sum(e["type"] == "model_call" for e in events) == row["turns"]


def test_a_ray_run_leaves_nothing_on_the_engine(demo_runs, docker_engine):
    assert_nothing_left(docker_engine, "on-ray")


def test_an_api_key_reaches_the_nodes_from_their_variables_and_no_log(ray_cluster, demo_suite, tmp_path):
    """The probe model's server answers only with the probe key: resolved rows prove the key was
    read on each node, then the key must be in no file of the cluster's sessions or the run."""
    from evalkit.models.builtin import builtin_policy
    from evalkit.models.server import ModelServer

    config = tmp_path / "evalkit.toml"
    tasks = ["kvstore-batch", "ledger-csv-import"]
    with ModelServer({"oracle": builtin_policy("oracle", demo_suite.tasks)}, token=ray_cluster.secret) as server:
        config.write_text(
            f'[models.probe]\nmodel = "oracle"\nbase_url = "{server.base_url}"\napi_key_env = "{PROBE_ENV}"\n'
            "max_retries = 0\n"
        )
        picked = [arg for task in tasks for arg in ("--task", task)]
        result = ray_run(ray_cluster, "--suite", DEMO_SUITE, *picked, "--model", "probe", "--config", config,
                         "--run-id", "keys", "--out", tmp_path, "--concurrency", "2")  # fmt: skip
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    rows = rows_of(tmp_path / "keys")
    assert sorted(r["task_id"] for r in rows if r["resolved"]) == tasks, rows
    assert {r["node"] for r in rows} == ray_cluster.both  # two at once, one sandbox a node: both read the key
    secret = ray_cluster.secret.encode()
    for folder in (ray_cluster.temp_dir, tmp_path / "keys"):
        files = [p for p in folder.rglob("*") if p.is_file() and not p.is_socket()]
        assert files, folder
        if folder == ray_cluster.temp_dir:  # the logs of both raylets and of the workers that ran attempts
            names = [p.name for p in files]
            assert sum(n.startswith("raylet") and n.endswith(".out") for n in names) >= 2, names
            assert any(n.startswith("worker-") for n in names), names
        assert [str(p) for p in files if secret in p.read_bytes()] == []
    assert ray_cluster.secret not in result.stdout + result.stderr


def test_a_killed_driver_resumes_from_its_run_id_alone(ray_cluster, docker_engine, tmp_path):
    """The driver SIGKILLed after some rows: `evalkit run --run-id X --out DIR` (the executor and
    cluster address come from run.json) finishes the rest on the cluster, no row doubled."""
    driver = started_in_background(ray_cluster, tmp_path, "--suite", DEMO_SUITE, "--model", "oracle",
                                   "--run-id", "resumed", "--concurrency", "2")  # fmt: skip
    run_dir = tmp_path / "resumed"
    try:
        wait_for(lambda: len(rows_of(run_dir)) >= 2 or driver.poll() is not None, "two rows")
    finally:
        driver.send_signal(signal.SIGKILL)
        driver.wait()
    before = rows_of(run_dir)
    assert 2 <= len(before) < 8, (tmp_path / "evalkit.log").read_text()[-3000:]
    assert json.loads((run_dir / "run.json").read_text())["options"]["executor"] == "ray"
    result = run_evalkit("run", "--run-id", "resumed", "--out", tmp_path)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    rows = rows_of(run_dir)
    assert rows[: len(before)] == before  # kept as they were
    assert len(rows) == len(keyed(rows)) == 8 and all(r["resolved"] for r in rows)
    assert {r["node"] for r in rows[len(before) :]} <= ray_cluster.both  # resumed on the cluster
    assert_nothing_left(docker_engine, "resumed")


def test_gather_on_the_cluster_gives_the_expected_suite_with_every_sandbox_busy(ray_cluster, tmp_path):
    """`evalkit gather --executor ray` without --concurrency, on the cluster with a third node (3
    sandboxes, where the local default is 2): the candidates' tests run on the nodes (each task
    names its node), 3 side by side, and the suite is the one a local gather of that history gives
    (tests/integration/test_gather.py)."""
    third = ray_cluster.cluster.add_node(**NODE_MEMORY, resources={"sandbox": 1, "node4": 1})
    try:
        ray_cluster.cluster.wait_for_nodes()
        repo = build_shop_repo(tmp_path / "shop")
        result = run_evalkit("gather", repo, "--out", tmp_path / "suite", "--min-lines", "20", "--runs", "8",
                             "--executor", "ray", "--ray-address", ray_cluster.address, timeout=900)  # fmt: skip
    finally:
        ray_cluster.cluster.remove_node(third)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    report = json.loads((tmp_path / "suite" / "gather-report.json").read_text())
    assert report["session"]["concurrency"] == 3
    tasks = load_suite(tmp_path / "suite").tasks
    assert sorted(t.metadata["original_message"].splitlines()[0] for t in tasks) == sorted(EXPECTED_TASK_SUBJECTS)
    assert {r["subject"]: r["stage"] for r in report["rejected"]} == {k: v[0] for k, v in EXPECTED_REJECTIONS.items()}
    assert {t.metadata["validated_on"] for t in tasks} <= ray_cluster.both | {ray_cluster.name_of(third)}


def test_a_node_without_an_engine_is_left_out_and_its_attempt_runs_elsewhere(ray_cluster, tmp_path):
    """A third node whose DOCKER_HOST points nowhere: three attempts at once, one sandbox a node,
    so one lands there; the node says in one line that it has no engine, is left out of the run,
    and that attempt runs on a node that has one: every attempt resolves, the run says which
    node it left out and why."""
    third = ray_cluster.cluster.add_node(
        **NODE_MEMORY, resources={"sandbox": 1, "node3": 1}, env_vars={"DOCKER_HOST": "unix:///nonexistent.sock"}
    )
    try:
        ray_cluster.cluster.wait_for_nodes()
        result = ray_run(ray_cluster, "--suite", DEMO_SUITE, "--model", "oracle", "--limit", "3", "--concurrency",
                         "3", "--run-id", "engineless", "--out", tmp_path)  # fmt: skip
    finally:
        ray_cluster.cluster.remove_node(third)
    rows = rows_of(tmp_path / "engineless")
    assert len(rows) == len(keyed(rows)) == 3, (result.stdout + result.stderr)[-3000:]
    assert all(r["resolved"] for r in rows), rows
    assert {r["node"] for r in rows} <= ray_cluster.both  # none on the node without an engine
    said = " ".join((result.stdout + result.stderr).split())
    assert f"left out of this run: node {ray_cluster.name_of(third)}: no Docker engine answers" in said, said[-2000:]
    assert result.returncode == 0 and "Traceback" not in result.stdout + result.stderr


def test_an_agent_in_the_sandbox_keeps_its_log_on_the_driver(ray_cluster, tmp_path):
    """A `command:` agent on the cluster: its output, kept beside the trajectory as the attempt's
    agent log (and named by the trajectory's `agent_command` event), reaches the driver's run
    folder as on a local run, from both nodes."""
    agent = "command:echo said-by-$EVALKIT_MODEL-on-the-node"
    result = ray_run(ray_cluster, "--suite", DEMO_SUITE, "--model", "null", "--limit", "2", "--agent", agent,
                     "--run-id", "agent-log", "--out", tmp_path, "--concurrency", "2")  # fmt: skip
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    run_dir = tmp_path / "agent-log"
    rows = rows_of(run_dir)
    assert len(rows) == 2 and {r["node"] for r in rows} == ray_cluster.both
    for row in rows:
        events = [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]
        (command,) = [e for e in events if e["type"] == "agent_command"]
        log = run_dir / "trajectories" / command["log"]
        assert log.is_file(), sorted(p.name for p in (run_dir / "trajectories").iterdir())
        assert "said-by-null-on-the-node" in log.read_text() and "exit code 0" in log.read_text()


def test_a_driver_without_an_engine_runs_validates_gathers_and_evaluates_on_the_cluster(ray_cluster, tmp_path):
    """The driver's DOCKER_HOST points nowhere; the nodes have the engine. The driver builds the
    workspaces (git) and the nodes the sandboxes, so a run, `tasks validate`, a gather and the
    evaluation of SWE-bench predictions on the cluster end as they do with an engine here. With
    --registry the driver builds and pushes the images: then it says in one line that it needs
    an engine."""
    nowhere = {"DOCKER_HOST": "unix:///nonexistent.sock"}
    on_cluster = ["--executor", "ray", "--ray-address", ray_cluster.address]
    run = run_evalkit("run", "--suite", DEMO_SUITE, "--model", "oracle", "--model", "null", "--limit", "2",
                      "--run-id", "driver-no-engine", "--out", tmp_path, *on_cluster, env=nowhere)  # fmt: skip
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]
    rows = rows_of(tmp_path / "driver-no-engine")
    assert sorted((r["model"], r["resolved"]) for r in rows) == [("null", False)] * 2 + [("oracle", True)] * 2
    assert {r["node"] for r in rows} <= ray_cluster.both
    task = rows[0]["task_id"]
    validate = run_evalkit("tasks", "validate", DEMO_SUITE, "--task", task, "--runs", "1", *on_cluster, env=nowhere)
    assert validate.returncode == 0 and "1 of 1 task valid" in validate.stderr, validate.stderr[-3000:]
    repo = build_shop_repo(tmp_path / "shop")
    gather = run_evalkit("gather", repo, "--out", tmp_path / "suite", "--min-lines", "20", "--max-tasks", "1",
                         *on_cluster, env=nowhere, timeout=900)  # fmt: skip
    assert gather.returncode == 0, (gather.stdout + gather.stderr)[-3000:]
    [gathered] = load_suite(tmp_path / "suite").tasks
    assert gathered.metadata["original_message"].splitlines()[0] in EXPECTED_TASK_SUBJECTS
    assert gathered.metadata["validated_on"] in ray_cluster.both
    gold = {t.id: t.patch for t in load_suite(DEMO_SUITE).tasks[:2]}
    predictions = tmp_path / "preds.jsonl"
    rows = [{"instance_id": i, "model_name_or_path": m, "model_patch": patch}
            for i, p in gold.items() for m, patch in (("gold", p), ("empty", ""))]  # fmt: skip
    predictions.write_text("".join(json.dumps(row) + "\n" for row in rows))
    evaluated = run_evalkit("evaluate", predictions, "--suite", DEMO_SUITE, "--run-id", "ev", "--out", tmp_path,
                            *on_cluster, env=nowhere)  # fmt: skip
    assert evaluated.returncode == 0, (evaluated.stdout + evaluated.stderr)[-3000:]
    reports = {m: json.loads((tmp_path / "ev" / f"{m}.report.json").read_text()) for m in ("gold", "empty")}
    assert sorted(reports["gold"]["resolved_ids"]) == sorted(reports["empty"]["empty_patch_ids"]) == sorted(gold)
    assert reports["gold"]["error_ids"] == reports["empty"]["error_ids"] == []
    pushed = run_evalkit("tasks", "validate", DEMO_SUITE, "--task", task, *on_cluster, "--registry", "127.0.0.1:1",
                         env=nowhere)  # fmt: skip
    said = " ".join(pushed.stderr.split())
    assert pushed.returncode == 2 and "Traceback" not in pushed.stderr, pushed.stderr[-3000:]
    assert "--registry 127.0.0.1:1: this machine builds and pushes the images, and no Docker engine answers" in said


def test_a_node_killed_mid_attempt_loses_no_attempt_and_leaves_no_container(ray_cluster, docker_engine, tmp_path):
    """Runs last: it takes the second node away, crashed while one of its workers runs an attempt.
    Ray runs that attempt again on the head; the crashed worker's containers are orphans, swept
    by the next evalkit backend opened on the engine."""
    driver = started_in_background(ray_cluster, tmp_path, "--suite", DEMO_SUITE, "--model", "oracle",
                                   "--run-id", "node-killed", "--concurrency", "2")  # fmt: skip
    raylet = ray_cluster.raylet_pid(ray_cluster.second)

    def task_on_the_second_node() -> str | None:
        """The task of an attempt a worker of the second node runs (its container's owner is one
        of that raylet's children)."""
        agent_sandboxes = {"label": [f"{LABEL_RUN}=node-killed", f"{LABEL_ROLE}=agent"]}  # made as an attempt starts
        running = docker_engine.containers.list(ignore_removed=True, filters=agent_sandboxes)
        for container in running:
            if parent_of(int(container.labels[LABEL_OWNER].rpartition(":")[2])) == raylet:
                return container.labels[LABEL_TASK]
        assert driver.poll() is None, (tmp_path / "evalkit.log").read_text()[-3000:]
        return None

    head = ray_cluster.name_of(ray_cluster.cluster.head_node)
    try:
        killed = wait_for(task_on_the_second_node, "an attempt on the second node")
        ray_cluster.crash(ray_cluster.second)
        assert driver.wait(timeout=300) == 0, (tmp_path / "evalkit.log").read_text()[-3000:]
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    rows = rows_of(tmp_path / "node-killed")
    assert len(rows) == len(keyed(rows)) == 8, rows
    assert all(r["resolved"] and r["stop_reason"] == "submitted" for r in rows)
    assert keyed(rows)[(killed, "oracle", 0)]["node"] == head  # run again elsewhere (it started ~4 s before)
    assert_nothing_left(docker_engine, "node-killed")
