"""`--user simulated` with agents that run their own tools in the sandbox: they ask through the
`ask-user` command, which reaches the simulated user on the host through the run's model proxy.

A `command:` agent and each real installed agent (mini-swe-agent, Qwen Code; its model a replayed
trajectory whose shell calls run `ask-user`) get the answer in their sandbox; the row tallies the
question like the tool loop's, and the trajectory holds the exchange. Without a user the sandbox has
no `ask-user`."""

import json
import shlex
from pathlib import Path

import pytest
from agent_runs import MSWEA_SUBMIT, agent_log, events_of, installed_agents, rows_of
from conftest import DEMO_SUITE, run_evalkit

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]  # mini-swe-agent's image may be built first

TASK = "kvstore-crash-recovery"
INFORMATIVE = "What should happen to a torn last line when the store opens?"  # the intent says; the prompt does not
ASKING = f"ask-user {shlex.quote(INFORMATIVE)}"
# prints the end of its prompt, then asks; its model is never called
COMMAND = f'command:printf "%s\\n" "$EVALKIT_PROMPT" | tail -n 1; {ASKING}'


def _stdout(log: str) -> str:
    return log.split("--- stdout ---")[1].split("--- stderr ---")[0]


def _run(out: Path, run_id: str, agent: str, model: str, *args: str):
    return run_evalkit("run", "--suite", DEMO_SUITE, "--task", TASK, "--model", model, "--agent", agent,
                       "--run-id", run_id, "--out", out, *args, timeout=1500)  # fmt: skip


def test_a_command_agent_asks_through_ask_user_and_the_row_tallies_it(docker_engine, tmp_path):
    result = _run(tmp_path, "cmd-asks", COMMAND, "null", "--user", "simulated")
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "cmd-asks")
    assert (row["user"], row["user_model"], row["questions"]) == ("simulated", "oracle-user", 1)
    assert row["question_classes"] == {"informative": 1} and row["user_leaks"] == 0
    assert row["stop_reason"] == "submitted" and row["error"] is None
    log = agent_log(tmp_path / "cmd-asks", row)
    assert 'run `ask-user "your question"` in the shell, at most 3 times' in log  # its prompt says so
    assert "torn last line" in _stdout(log)  # the answer, in the sandbox
    (exchange,) = [e for e in events_of(tmp_path / "cmd-asks", row) if e["type"] == "user"]
    assert (exchange["via"], exchange["question"], exchange["class"]) == ("ask-user", INFORMATIVE, "informative")
    start = events_of(tmp_path / "cmd-asks", row)[0]
    assert start["user"] == "oracle-user" and start["tools"] == []  # no tool schema: a command offers it
    (score,) = [json.loads(line) for line in (tmp_path / "cmd-asks" / "scores.jsonl").read_text().splitlines()]
    assert score["interaction"]["counts"]["informative_question"] == 1  # scored like the tool loop's

    alone = _run(tmp_path, "cmd-alone", COMMAND, "null")  # no user: no command to ask with
    (row,) = rows_of(tmp_path / "cmd-alone")
    assert alone.returncode == 0 and row["user"] is None and row["questions"] == 0
    assert row["stop_reason"] == "agent_error" and "ask-user: command not found" in row["error"]
    assert "ask-user" not in _stdout(agent_log(tmp_path / "cmd-alone", row))  # nor told of it


def _shell(tool: str, call_id: str, command: str) -> dict:
    arguments = json.dumps({"command": command})
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": arguments}}
    return {"role": "assistant", "content": "THOUGHT: ask first.", "tool_calls": [call]}


# each installed agent's model, replayed: its shell tool runs `ask-user`, then it finishes its way
PLANS = {
    "mini-swe-agent": [_shell("bash", "c1", ASKING), _shell("bash", "c2", MSWEA_SUBMIT)],
    "qwen-code": [_shell("run_shell_command", "c1", ASKING), {"role": "assistant", "content": "Done."}],
}


@pytest.mark.parametrize("agent", installed_agents())
def test_an_installed_agent_asks_with_its_shell_tool_and_reads_the_answer(agent, docker_engine, tmp_path):
    recorded = tmp_path / "asks.jsonl"
    recorded.write_text("".join(json.dumps({"type": "message", "t": 0.0, "message": m}) + "\n" for m in PLANS[agent]))
    result = _run(tmp_path, "asks", agent, f"replay:{recorded}", "--user", "simulated")
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "asks")
    assert (row["agent"], row["user"], row["questions"]) == (agent, "simulated", 1)
    assert row["question_classes"] == {"informative": 1}
    assert row["stop_reason"] == "submitted" and row["turns"] == 2, row["error"]
    events = events_of(tmp_path / "asks", row)
    (exchange,) = [e for e in events if e["type"] == "user"]
    assert exchange["via"] == "ask-user" and exchange["question"] == INFORMATIVE
    # what the agent sent its model next: the command's output, the user's answer in it
    messages = [e["message"] for e in events if e["type"] == "message"]
    observations = [json.dumps(m) for m in messages if m["role"] == "tool"]
    assert any("torn last line" in text for text in observations), observations
    first_prompt = next(m for m in messages if m["role"] == "user")
    assert "ask-user" in json.dumps(first_prompt)  # the agent passed the line on to its model
