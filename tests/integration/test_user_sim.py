"""`evalkit run --user simulated` end to end in real sandboxes: the built-in models never ask, so
the demo suite's verdicts are unchanged (oracle 8/8, null 0/8), and a recorded trajectory that asks
`oracle-user` one informative and one redundant question gets both answered and classed as such,
in the trajectory's `user` events and on the attempt's row."""

import json
from pathlib import Path

import pytest
from conftest import DEMO_SUITE, run_evalkit

pytestmark = pytest.mark.integration

TASK = "kvstore-crash-recovery"
INFORMATIVE = "What should happen to a torn last line when the store opens?"  # the intent says; the prompt does not
REDUNDANT = "When kv check finds corruption, what exit code?"  # the prompt already says: non-zero


def rows_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def events_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_built_in_models_never_ask_and_keep_their_verdicts(demo_suite, docker_engine, tmp_path):
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--model", "oracle", "--model", "null", "--user", "simulated",
                         "--run-id", "asked", "--out", tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    rows = rows_of(tmp_path / "asked")
    assert len(rows) == 2 * len(demo_suite.tasks) == 16
    for model, resolved in (("oracle", 8), ("null", 0)):
        mine = [r for r in rows if r["model"] == model]
        assert sum(r["resolved"] for r in mine) == resolved, [(r["task_id"], r["error"]) for r in mine]
    assert {(r["user"], r["user_model"], r["questions"], json.dumps(r["question_classes"])) for r in rows} == {
        ("simulated", "oracle-user", 0, "{}")
    }
    options = json.loads((tmp_path / "asked" / "run.json").read_text())["options"]
    assert (options["user"], options["user_model"]) == ("simulated", "oracle-user")
    start = events_of(tmp_path / "asked" / rows[0]["trajectory"])[0]
    assert "ask_user" in [t["function"]["name"] for t in start["tools"]]


def _ask(call_id: str, question: str) -> dict:
    arguments = json.dumps({"question": question})
    call = {"id": call_id, "type": "function", "function": {"name": "ask_user", "arguments": arguments}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_a_replayed_trajectory_asks_and_oracle_user_classes_each_question(demo_suite, docker_engine, tmp_path):
    task = next(t for t in demo_suite.tasks if t.id == TASK)
    submit = {"id": "c3", "type": "function", "function": {"name": "submit", "arguments": '{"summary": "Nothing."}'}}
    messages = [
        {"role": "system", "content": "You are a software engineer."},
        {"role": "user", "content": task.prompt},
        _ask("c1", INFORMATIVE),
        {"role": "tool", "tool_call_id": "c1", "content": "(answered live on replay)"},
        _ask("c2", REDUNDANT),
        {"role": "tool", "tool_call_id": "c2", "content": "(answered live on replay)"},
        {"role": "assistant", "content": None, "tool_calls": [submit]},
    ]
    recorded = tmp_path / "asking.jsonl"
    recorded.write_text("".join(json.dumps({"type": "message", "t": 0.0, "message": m}) + "\n" for m in messages))
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--task", TASK, "--model", f"replay:{recorded}",
                         "--user", "simulated", "--run-id", "replayed", "--out", tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(tmp_path / "replayed")
    assert (row["user"], row["user_model"], row["questions"]) == ("simulated", "oracle-user", 2)
    assert row["question_classes"] == {"informative": 1, "redundant": 1}
    assert row["user_leaks"] == 0 and row["user_usage"]["total_tokens"] == 0
    assert row["stop_reason"] == "submitted" and not row["faults"]
    exchanges = [e for e in events_of(tmp_path / "replayed" / row["trajectory"]) if e["type"] == "user"]
    assert [(e["question"], e["class"]) for e in exchanges] == [(INFORMATIVE, "informative"), (REDUNDANT, "redundant")]
    assert "torn last line" in exchanges[0]["answer"] and "non-zero" in exchanges[1]["answer"]
