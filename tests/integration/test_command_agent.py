"""`--agent command:TEMPLATE` end to end: a minimal agent written here (tests/data/urllib_agent.py,
standard library only) runs inside proxied sandboxes and calls the built-in models through the
run's model proxy; the oracle resolves through it, null does not, budgets and faults end with the
right stop reason, and no container or network is left."""

import json
import shlex
from pathlib import Path

import pytest
from agent_runs import assert_nothing_left, events_of, rows_of
from conftest import DEMO_SUITE, run_evalkit

pytestmark = pytest.mark.integration

AGENT_SOURCE = (Path(__file__).parent.parent / "data" / "urllib_agent.py").read_text()
URLLIB_AGENT = "command:python3 -c " + shlex.quote(AGENT_SOURCE)  # the sandbox has no host mounts
TASKS = ("kvstore-batch", "ledger-csv-import")


def run_command_agent(out: Path, run_id: str, agent: str, *args: str, tasks=TASKS, models=("oracle",)):
    selection = [part for task in tasks for part in ("--task", task)]
    chosen = [part for model in models for part in ("--model", model)]
    return run_evalkit("run", "--suite", DEMO_SUITE, *selection, *chosen, "--agent", agent, "--run-id", run_id,
                       "--out", out, *args)  # fmt: skip


@pytest.fixture(scope="module")
def demo_run(docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    result = run_command_agent(out, "cmd-demo", URLLIB_AGENT, models=("oracle", "null"))
    return result, out / "cmd-demo"


def test_the_oracle_resolves_through_an_agent_in_the_sandbox_and_null_does_not(demo_run, docker_engine):
    result, run_dir = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    rows = rows_of(run_dir)
    for model, resolved in (("oracle", True), ("null", False)):
        mine = [r for r in rows if r["model"] == model]
        assert sorted(r["task_id"] for r in mine) == sorted(TASKS)
        assert all(r["tests_resolved"] is resolved and r["stop_reason"] == "submitted" and r["error"] is None
                   for r in mine)  # fmt: skip
    for row in rows:
        assert row["agent"].startswith("command:python3 -c ") and len(row["agent"]) <= len("command:") + 80
        assert row["evidence"] == ["diff", "traffic", "usage"] and row["usage"]["prompt_tokens"] > 0
        assert row["turns"] >= 1 and row["tool_calls"] == (row["turns"] - 1 if row["model"] == "oracle" else 0)
    scores = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    for score in (s for s in scores if s["model"] == "oracle"):  # from the proxy's figures and the traffic
        assert score["efficiency"]["score"] is not None and score["interaction"]["score"] is not None
        assert score["interaction"]["not_observed"] and score["interaction"]["counts"]["malformed_call"] == 0
    assert all(r["model_patch"] == "" for r in rows if r["model"] == "null")
    assert_nothing_left(docker_engine, "cmd-demo")


def test_the_traffic_is_in_the_trajectory_and_the_agents_output_beside_it(demo_run):
    _, run_dir = demo_run
    row = next(r for r in rows_of(run_dir) if r["model"] == "oracle")
    events = events_of(run_dir, row)
    command = next(e for e in events if e["type"] == "agent_command")
    assert command["command"] == URLLIB_AGENT.removeprefix("command:")
    requests = [e for e in events if e["type"] == "proxy_request"]
    calls = [e for e in events if e["type"] == "model_call"]
    assert len(requests) == len(calls) == row["turns"] and requests[0]["tools"][0]["function"]["name"] == "bash"
    sent = [e["message"] for e in events if e["type"] == "message"]
    assert sent[0]["role"] == "user" and sent[0]["content"]  # the task prompt, as $EVALKIT_PROMPT gave it
    assert any(m["role"] == "tool" for m in sent)  # the agent ran the oracle's calls and sent the results back
    exit_event = next(e for e in events if e["type"] == "agent_exit")
    assert exit_event["exit_code"] == 0 and exit_event["timed_out"] is False
    log = (run_dir / "trajectories" / command["log"]).read_text()
    assert log.startswith("$ python3 -c ") and "exit code 0" in log and "turn 1: 1 tool call(s)" in log
    assert command["log"] == Path(row["trajectory"]).name.removesuffix(".jsonl") + ".agent.log"


def test_a_spent_budget_ends_the_attempt_as_the_proxy_says(docker_engine, tmp_path):
    result = run_command_agent(tmp_path, "cmd-turns", URLLIB_AGENT, "--max-turns", "1", tasks=TASKS[:1])
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "cmd-turns")
    assert row["stop_reason"] == "max_turns" and row["turns"] == 1  # its one turn applied the change: scored anyway
    assert row["tests_resolved"]
    log = (tmp_path / "cmd-turns" / row["trajectory"]).with_suffix(".agent.log").read_text()
    assert "model error 400" in log and "max_turns budget is spent" in log  # the agent saw why
    assert_nothing_left(docker_engine, "cmd-turns")


def test_an_agent_that_hangs_is_killed_at_the_wall_time(docker_engine, tmp_path):
    result = run_command_agent(tmp_path, "cmd-hang", "command:sleep 600 & sleep 600", "--wall-time", "6",
                               tasks=TASKS[:1])  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "cmd-hang")
    assert row["stop_reason"] == "wall_time" and row["agent_s"] < 60 and row["turns"] == 0
    assert_nothing_left(docker_engine, "cmd-hang")


def test_an_agent_that_fails_keeps_its_exit_code_and_last_words(docker_engine, tmp_path):
    result = run_command_agent(tmp_path, "cmd-fail", "command:echo working; echo 'no model configured' >&2; exit 3",
                               tasks=TASKS[:1])  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "cmd-fail")
    assert row["stop_reason"] == "agent_error" and not row["resolved"]
    assert row["error"] == "the agent command exited with code 3: no model configured"
    log = (tmp_path / "cmd-fail" / row["trajectory"]).with_suffix(".agent.log").read_text()
    assert "exit code 3" in log and "--- stdout ---\nworking" in log
    assert_nothing_left(docker_engine, "cmd-fail")
