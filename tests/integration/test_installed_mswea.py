"""`--agent mini-swe-agent` end to end: the agent is installed from its recipe into an image layer
(built once, reused by every run after), runs its own loop in proxied sandboxes and calls the
built-in models through the run's model proxy; the oracle resolves every demo task through it and
null none, every attempt names the agent and its pinned version, its logs are kept, the scoring
sandbox has none of its files, a failing agent build is one line, and nothing is left behind. The
agent brings its own Python, so it runs on task images whose Python is another (3.9, 3.13).

The first run builds `evalkit/agent-mini-swe-agent` (pip from PyPI, about 1.5-2 minutes on 2 shared
cores) and one thin layer per task image (seconds each); later runs reuse them."""

import json
import os
import shlex
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from agent_runs import (
    MSWEA_SUBMIT,
    agent_log,
    assert_the_demo_proves_itself,
    events_of,
    rows_of,
    run_demo_through,
    run_on_python_base,
)
from conftest import DEMO_SUITE, EVALKIT, run_evalkit

from evalkit.runs.attempt import AGENT_ROLE, AttemptKey, attempt_sandboxes
from evalkit.sandbox.docker.backend import DockerBackend
from evalkit.sandbox.docker.containers import LABEL_RUN
from evalkit.sandbox.docker.images import BASE_IMAGE
from evalkit.sandbox.python_bases import base_for_suite
from evalkit.sandbox.recipes import agent_recipe, recipe_version
from evalkit.tasks import load_suite
from evalkit.verify.correctness import SCORE_ROLE

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]  # the first run builds the agent image

AGENT = "mini-swe-agent"
DRIVER = f"/opt/evalkit-agents/{AGENT}/run_mswea.py"
LIB = f"/opt/evalkit-agents/{AGENT}/lib"
PYTHON = f"/opt/evalkit-agents/{AGENT}/runtime/bin/python3"  # the agent's own, whatever the image has


@pytest.fixture(scope="module")
def mswea_run(docker_engine, tmp_path_factory):
    """Every demo task with oracle and null through mini-swe-agent (16 attempts, concurrency 2)."""
    return run_demo_through(AGENT, tmp_path_factory.mktemp("runs"), "mswea-demo")


def test_the_oracle_resolves_every_demo_task_through_mini_swe_agent_and_null_none(mswea_run, docker_engine):
    result, run_dir = mswea_run
    assert result.returncode == 0, result.stderr[-3000:]
    rows = rows_of(run_dir)
    assert_the_demo_proves_itself(rows, AGENT, "2.4.6")
    for row in rows:
        assert row["evidence"] == ["diff", "traffic", "usage"]
        assert row["usage"]["prompt_tokens"] > 0 and row["turns"] >= 1
    assert "1 warn" not in result.stdout and all(r["integrity"]["flags"] == [] for r in rows)
    label = {"label": f"{LABEL_RUN}=mswea-demo"}
    assert docker_engine.containers.list(all=True, ignore_removed=True, filters=label) == []
    assert docker_engine.networks.list(filters=label) == []


def test_its_requests_logs_and_version_are_kept_beside_the_trajectory(mswea_run):
    _, run_dir = mswea_run
    row = next(r for r in rows_of(run_dir) if r["model"] == "oracle")
    events = events_of(run_dir, row)
    start = events[0]
    assert (start["agent"], start["agent_version"]) == (AGENT, row["agent_version"])
    # what mini-swe-agent 2.4.6 sends: one `bash` tool taking `command`, answered through it
    tools = next(e["tools"] for e in events if e["type"] == "proxy_request")
    assert [t["function"]["name"] for t in tools] == ["bash"]
    assert tools[0]["function"]["parameters"]["required"] == ["command"]
    finish = [m for e in events if e["type"] == "message" and (m := e["message"])["role"] == "assistant"][-1]
    assert json.loads(finish["tool_calls"][0]["function"]["arguments"]) == {"command": MSWEA_SUBMIT}
    command = next(e for e in events if e["type"] == "agent_command")
    assert command["command"] == f"{PYTHON} {DRIVER}"
    log = (run_dir / "trajectories" / command["log"]).read_text()
    assert "mini-swe-agent exit status: Submitted" in log and "exit code 0" in log
    kept = run_dir / "trajectories" / command["log"].replace(".agent.log", f".agent.{AGENT}.traj.json")
    trajectory = json.loads(kept.read_text())
    assert trajectory["info"]["mini_version"] == row["agent_version"]
    assert trajectory["info"]["exit_status"] == "Submitted"


def test_only_the_agents_sandbox_has_its_files_scoring_gets_the_plain_task_image(docker_engine, mswea_run):
    """After the run above the images exist: the agent's sandbox (as an attempt asks for it) has the
    driver, the scoring sandbox of the same task does not."""
    task = load_suite(DEMO_SUITE).tasks[0]
    wanted = attempt_sandboxes(AttemptKey(task, "oracle", 0), task.limits, "none", AGENT)
    assert (wanted.layer, wanted.then.layer) == (AGENT, None)
    backend = DockerBackend(docker_engine, run_id="pytest-mswea-layer-" + socket.gethostname()[:6])
    try:
        with backend.open(task, role=AGENT_ROLE, layer=wanted.layer) as agent_box:
            probe = f"import sys; sys.path.insert(0, '{LIB}'); import minisweagent; print(minisweagent.__version__)"
            quiet = "MSWEA_SILENT_STARTUP=1 MSWEA_GLOBAL_CONFIG_DIR=/tmp/mswea"
            found = agent_box.exec(f"test -r {DRIVER} && {quiet} {PYTHON} -c {shlex.quote(probe)}")  # the sandbox user
            assert (found.exit_code, found.stdout.strip()) == (0, recipe_version(agent_recipe(AGENT)))
            assert agent_box.diff() == ""  # the agent's files are not in the workspace
        with backend.open(task, role=SCORE_ROLE) as score_box:
            assert score_box.exec("test -e /opt/evalkit-agents").exit_code != 0
    finally:
        backend.close()
    assert backend.remaining() == []


def test_a_failing_agent_build_is_one_line_and_no_attempt_runs(docker_engine, tmp_path):
    sandboxes = Path(__file__).resolve().parents[2] / "sandboxes"
    copy = shutil.copytree(sandboxes, tmp_path / "sandboxes")
    dockerfile = copy / "agents" / AGENT / "Dockerfile"
    # failing before the slow install, so the test does not pay for it
    failing = dockerfile.read_text().replace("USER root\n", "USER root\nRUN echo 'no such package' && false\n")
    dockerfile.write_text(failing)
    out = tmp_path / "runs"
    command = [EVALKIT, "run", "--suite", str(DEMO_SUITE), "--task", "kvstore-batch", "--model", "null",
               "--agent", AGENT, "--run-id", "broken-agent", "--out", str(out)]  # fmt: skip
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "EVALKIT_SANDBOXES": str(copy)},
                            timeout=900)  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert f"installed agent {AGENT}" in line and "no such package" in line
    assert not (out / "broken-agent" / "results.jsonl").exists() or rows_of(out / "broken-agent") == []
    label = {"label": f"{LABEL_RUN}=broken-agent"}
    assert docker_engine.containers.list(all=True, ignore_removed=True, filters=label) == []


def test_a_spent_budget_ends_mini_swe_agent_at_its_next_request_without_retries(mswea_run, tmp_path):
    """The proxy's 400 after `--max-turns 1` is not retried by the agent (its driver aborts on a
    400): one refused request, stop reason `max_turns`, the refusal in the agent's log."""
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--task", "kvstore-batch", "--model", "oracle", "--agent", AGENT,
                         "--max-turns", "1", "--run-id", "mswea-turns", "--out", tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "mswea-turns")
    assert (row["stop_reason"], row["turns"]) == ("max_turns", 1)
    events = events_of(tmp_path / "mswea-turns", row)
    assert [e["stop_reason"] for e in events if e["type"] == "proxy_refused"] == ["max_turns"]
    log = (tmp_path / "mswea-turns" / "trajectories" / next(e["log"] for e in events if e["type"] == "agent_command"))
    assert "max_turns budget is spent" in log.read_text()


@pytest.mark.parametrize("suite", ["bullseye", "trixie"])
def test_mini_swe_agent_runs_on_a_task_image_whose_python_is_another(docker_engine, tmp_path, suite):
    """A task on the bullseye (Python 3.9) or trixie (3.13) base: the agent, installed with the
    default base's Python (3.11), runs there on its own interpreter, loader and libraries, and the
    oracle resolves the task through it; the sandbox's `python3` stays the image's own."""
    row, run_dir, task = run_on_python_base(docker_engine, AGENT, suite, tmp_path)
    assert row["resolved"] is True, (row["stop_reason"], row["error"], agent_log(run_dir, row)[-2000:])
    assert "mini-swe-agent exit status: Submitted" in agent_log(run_dir, row)
    backend = DockerBackend(docker_engine, run_id=f"pytest-mswea-{suite}-" + socket.gethostname()[:6])
    try:
        with backend.open(task, role=AGENT_ROLE, layer=AGENT) as agent_box:
            pythons = agent_box.exec(f"python3 --version && {PYTHON} --version")
    finally:
        backend.close()
    installed_with = docker_engine.containers.run(BASE_IMAGE, ["python3", "--version"], remove=True).decode()
    system, own = pythons.stdout.splitlines()
    wanted = base_for_suite(suite).python_version
    assert system.startswith(f"Python {wanted}.") and own == installed_with.strip() != system, pythons
