"""Reference policies, without HTTP: the oracle's tool calls rebuild the reference change exactly;
when an edit fails it falls back to `git apply`; replay plays recorded turns back byte for byte."""

import json
import subprocess
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.models.policies import ORACLE_PATCH_PATH, OraclePolicy, ReplayPolicy, oracle_plan


def _apply_calls(tree: dict[str, str], turns) -> dict[str, str]:
    """Carry out write_file / edit / `rm` calls on an in-memory tree, as the agent's tools would."""
    tree = dict(tree)
    for turn in turns:
        for call in turn:
            args = call.arguments
            if call.name == "write_file":
                tree[args["path"]] = args["content"]
            elif call.name == "edit":
                text = tree[args["path"]]
                assert text.count(args["old_string"]) == 1, f"ambiguous or missing edit in {args['path']}"
                tree[args["path"]] = text.replace(args["old_string"], args["new_string"], 1)
            elif call.name == "bash":
                assert call.arguments["command"].startswith("rm -f -- ")
                del tree[call.arguments["command"].split("-- ", 1)[1].strip("'")]
    return tree


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): p.read_text() for p in folder.rglob("*") if p.is_file()}


def test_oracle_plan_rebuilds_every_demo_reference_change(demo_suite, tmp_path):
    for task in demo_suite.tasks:
        base = _tree(task.source.snapshot)
        plan = oracle_plan(task.patch)
        assert plan is not None, task.id
        after = _apply_calls(base, plan)
        work = tmp_path / task.id
        for path, text in base.items():
            (work / path).parent.mkdir(parents=True, exist_ok=True)
            (work / path).write_text(text)
        subprocess.run(["git", "apply", "-"], input=task.patch, text=True, cwd=work, check=True)
        assert after == _tree(work), task.id


def test_oracle_falls_back_to_git_apply_after_a_failed_edit(toy_task):
    oracle = OraclePolicy([toy_task])
    messages = [{"role": "user", "content": toy_task.prompt}]
    first = oracle.respond(messages)
    assert [c.name for c in first.tool_calls] == ["edit"]
    messages += [
        {"role": "assistant", "tool_calls": [{"id": "1"}]},
        {"role": "tool", "tool_call_id": "1", "content": "Error: old_string occurs 2 times"},
    ]
    calls = []
    for _ in range(4):
        (call,) = oracle.respond(messages).tool_calls
        calls.append(call)
        messages += [{"role": "assistant"}, {"role": "tool", "content": "ok"}]
    assert [c.name for c in calls] == ["bash", "write_file", "bash", "submit"]
    assert "git checkout" in calls[0].arguments["command"]
    assert calls[1].arguments == {"path": ORACLE_PATCH_PATH, "content": toy_task.patch}
    assert "git apply" in calls[2].arguments["command"]


def test_oracle_uses_git_apply_for_patches_its_tools_cannot_express():
    patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
    assert oracle_plan(patch) is None


def _trajectory(path: Path, prompt: str, assistant_messages: list[dict]) -> Path:
    events = [{"type": "start"}, {"type": "message", "message": {"role": "user", "content": prompt}}]
    events += [{"type": "message", "message": m} for m in assistant_messages]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def test_replay_plays_recorded_turns_including_malformed_arguments(tmp_path):
    recorded = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "a", "type": "function", "function": {"name": "bash", "arguments": "{broken"}}],
        },
        {"role": "assistant", "content": "done"},
    ]
    replay = ReplayPolicy(_trajectory(tmp_path / "t.jsonl", "do it", recorded))
    messages = [{"role": "user", "content": "do it"}]
    first = replay.respond(messages)
    assert first.tool_calls[0].arguments == "{broken"
    messages.append({"role": "assistant"})
    assert replay.respond(messages).content == "done"
    messages.append({"role": "assistant"})
    assert "ends here" in replay.respond(messages).content


def test_replay_folder_matches_trajectories_by_prompt(tmp_path):
    _trajectory(tmp_path / "a.jsonl", "add power", [{"role": "assistant", "content": "A"}])
    _trajectory(tmp_path / "b.jsonl", "add logging", [{"role": "assistant", "content": "B"}])
    replay = ReplayPolicy(tmp_path)
    assert replay.respond([{"role": "user", "content": "Task: add logging\n"}]).content == "B"
    assert replay.respond([{"role": "user", "content": "add power"}]).content == "A"


def test_replay_of_something_else_is_one_clear_error(tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("hello\n")
    with pytest.raises(EvalkitError, match="notes.jsonl:1: not a JSON line"):
        ReplayPolicy(bad)
