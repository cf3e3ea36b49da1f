"""`--agent qwen-code` end to end: Qwen Code, an npm CLI agent, installed from its recipe into an
image layer (node 22 and the agent under /opt/evalkit-agents/qwen-code, built once and reused by
every run after) runs headless in proxied sandboxes and calls the built-in models through the run's
model proxy, streaming; the oracle resolves every demo task through its shell tool and null none,
every attempt names the agent and its pinned version, its event log is kept, and nothing is left;
its own node runs on a task image of another base (bullseye: Python 3.9, glibc 2.31).

The first run builds `evalkit/agent-qwen-code` (Debian's npm in a throw-away stage, then the agent
and node from the npm registry: about 1-2 minutes here, more when the registry is slow) and one
thin layer per task image; the 16 attempts then take about 3 minutes (node starts in 5-10 s)."""

import json

import pytest
from agent_runs import (
    agent_log,
    assert_nothing_left,
    assert_the_demo_proves_itself,
    events_of,
    rows_of,
    run_demo_through,
    run_on_python_base,
)
from conftest import DEMO_SUITE, run_evalkit

from evalkit.sandbox.docker.containers import LABEL_RUN

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]  # the first run builds the agent image

AGENT = "qwen-code"
RUN_ID = "qwen-code-demo"


@pytest.fixture(scope="module")
def qwen_run(docker_engine, tmp_path_factory):
    """Every demo task with oracle and null through Qwen Code (16 attempts, concurrency 2)."""
    return run_demo_through(AGENT, tmp_path_factory.mktemp("runs"), RUN_ID)


def test_the_oracle_resolves_every_demo_task_through_qwen_code_and_null_none(qwen_run, docker_engine):
    result, run_dir = qwen_run
    assert result.returncode == 0, result.stderr[-3000:]
    rows = rows_of(run_dir)
    assert_the_demo_proves_itself(rows, AGENT, "0.24.4")
    assert all(r["turns"] == 2 for r in rows if r["model"] == "oracle")  # no background model call after
    assert_nothing_left(docker_engine, RUN_ID)


def test_it_streams_through_its_shell_tool_and_its_event_log_is_kept(qwen_run):
    _, run_dir = qwen_run
    row = next(r for r in rows_of(run_dir) if r["model"] == "oracle")
    events = events_of(run_dir, row)
    requests = [e for e in events if e["type"] == "proxy_request"]
    assert all(r["stream"] for r in requests) and "rewritten" not in requests[-1]
    assert requests[0]["params"]["model"] == "oracle"  # evalkit's name for the model, as the wrapper gives it
    assert {"run_shell_command", "edit", "write_file"} <= {t["function"]["name"] for t in requests[0]["tools"]}
    said = [e["message"] for e in events if e["type"] == "message" and e["message"]["role"] == "assistant"]
    assert [c["function"]["name"] for c in said[0]["tool_calls"]] == ["run_shell_command"]
    assert said[-1]["content"] and not said[-1].get("tool_calls")
    command = next(e for e in events if e["type"] == "agent_command")
    assert command["command"] == f"/opt/evalkit-agents/{AGENT}/evalkit-agent"
    log = (run_dir / "trajectories" / command["log"]).read_text()
    assert "exit code 0" in log
    outcome = [json.loads(line) for line in log.splitlines() if line.startswith('{"type":"result"')]
    assert len(outcome) == 1 and outcome[0]["subtype"] == "success" and outcome[0]["num_turns"] == 2


def test_past_max_turns_qwen_code_is_refused_once_and_the_attempt_says_why(docker_engine, tmp_path):
    """The proxy's refusal (HTTP 400) is no error Qwen Code retries: it stops at once, exit code 1."""
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--task", "kvstore-batch", "--model", "oracle", "--agent",
                         AGENT, "--max-turns", "1", "--run-id", "qwen-code-turns", "--out", tmp_path)  # fmt: skip
    run_dir = tmp_path / "qwen-code-turns"
    (row,) = rows_of(run_dir)
    assert (row["stop_reason"], row["turns"]) == ("max_turns", 1), result.stderr[-2000:]
    assert row["resolved"] is True  # its one turn applied the change (one shell command): the diff is scored
    events = events_of(run_dir, row)
    assert [e["request"] for e in events if e["type"] == "proxy_refused"] == [2]
    assert next(e for e in events if e["type"] == "agent_exit")["exit_code"] == 1
    label = {"label": f"{LABEL_RUN}=qwen-code-turns"}
    assert docker_engine.containers.list(all=True, ignore_removed=True, filters=label) == []


def test_qwen_code_runs_on_a_task_image_of_another_base(docker_engine, tmp_path):
    row, run_dir, _ = run_on_python_base(docker_engine, AGENT, "bullseye", tmp_path)
    assert row["resolved"] is True, (row["stop_reason"], row["error"], agent_log(run_dir, row)[-2000:])
