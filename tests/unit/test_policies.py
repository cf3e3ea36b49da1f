"""Reference policies, without HTTP: the oracle's tool calls rebuild the reference change exactly
with only the tools a request offers; when an edit fails it falls back to `git apply`; replay
plays recorded turns back byte for byte."""

import itertools
import json
import subprocess
from pathlib import Path

import pytest
from toy import BASE_FILES, POWER, diff_of, git_tree, tree_files

from evalkit.agent.tools import TOOL_SCHEMAS
from evalkit.errors import EvalkitError
from evalkit.models.policies import ORACLE_PATCH_PATH, AssistantTurn, OraclePolicy, ReplayPolicy, oracle_plan

ALL_TOOLS = list(TOOL_SCHEMAS)


def _schemas(names) -> list[dict]:
    """evalkit's own tool schemas of these names: what a request offering only them sends."""
    return [s for s in TOOL_SCHEMAS if s["function"]["name"] in names]


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
    first = oracle.respond(messages, ALL_TOOLS)
    assert [c.name for c in first.tool_calls] == ["edit"]
    messages += [
        {"role": "assistant", "tool_calls": [{"id": "1"}]},
        {"role": "tool", "tool_call_id": "1", "content": "Error: old_string occurs 2 times"},
    ]
    calls = []
    for _ in range(4):
        (call,) = oracle.respond(messages, ALL_TOOLS).tool_calls
        calls.append(call)
        messages += [{"role": "assistant"}, {"role": "tool", "content": "ok"}]
    assert [c.name for c in calls] == ["bash", "write_file", "bash", "submit"]
    assert "git checkout" in calls[0].arguments["command"]
    assert calls[1].arguments == {"path": ORACLE_PATCH_PATH, "content": toy_task.patch}
    assert "git apply" in calls[2].arguments["command"]


def test_oracle_uses_git_apply_for_patches_its_tools_cannot_express():
    patch = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+b\n"
    assert oracle_plan(patch) is None


# every subset of the tools the oracle can use, beside the two it never needs
TOOL_SETS = [
    frozenset(subset) | {"read_file", "search"}
    for n in range(5)
    for subset in itertools.combinations(("bash", "edit", "write_file", "submit"), n)
]


def _carry_out(call, work: Path, scratch: Path) -> str:
    """What the agent's tool would do, on the host: files in `work`, the oracle's patch file in `scratch`."""
    args = call.arguments
    if call.name == "write_file":
        path = work / args["path"].replace(ORACLE_PATCH_PATH, str(scratch / "oracle.patch"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(args["content"])
        return "Wrote."
    if call.name == "edit":
        text = (work / args["path"]).read_text()
        if text.count(args["old_string"]) != 1:
            return f"Error: old_string occurs {text.count(args['old_string'])} times"
        (work / args["path"]).write_text(text.replace(args["old_string"], args["new_string"], 1))
        return "Edited."
    assert call.name == "bash", call.name
    command = args["command"].replace(ORACLE_PATCH_PATH, str(scratch / "oracle.patch"))
    done = subprocess.run(["bash", "-c", command], cwd=work, capture_output=True, text=True)
    return f"{done.stdout}{done.stderr}[exit code {done.returncode}]"


def _play(task, tools: frozenset[str], work: Path) -> tuple[list[str], AssistantTurn]:
    """The oracle's conversation until it submits or answers in text: the tools it called, the last turn."""
    oracle, called = OraclePolicy([task]), []
    messages = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": task.prompt}]
    scratch = work.parent / "scratch"
    scratch.mkdir(exist_ok=True)
    for _ in range(30):
        turn = oracle.respond(messages, _schemas(tools))
        if not turn.tool_calls:
            return called, turn
        messages.append({"role": "assistant", "content": turn.content})
        for call in turn.tool_calls:
            called.append(call.name)
            if call.name == "submit":
                return called, turn
            messages.append({"role": "tool", "content": _carry_out(call, work, scratch)})
    raise AssertionError("the oracle never finished")


@pytest.fixture(scope="module")
def oracle_cases(toy_task, demo_suite, toy_suite_dir):
    """Changed files only (toy); new files too (a demo task); a deleted, a new and a changed file."""
    snapshot = toy_suite_dir / "repos" / "calc"
    power = BASE_FILES["calc/__init__.py"] + POWER
    edits = {"calc/__init__.py": power, "tests/test_calc.py": None, "calc/x.py": "X = 1\n"}
    mixed = toy_task.model_copy(update={"id": "mixed", "prompt": "Mixed change.", "patch": diff_of(snapshot, edits)})
    return [toy_task, next(t for t in demo_suite.tasks if t.id == "ledger-csv-import"), mixed]


def _tools_id(tools: frozenset[str]) -> str:
    return "+".join(sorted(tools - {"read_file", "search"})) or "none"


@pytest.mark.parametrize("tools", TOOL_SETS, ids=_tools_id)
def test_oracle_calls_only_the_tools_offered_and_still_makes_the_change(oracle_cases, tools, tmp_path):
    for task in oracle_cases:
        base = git_tree(task.source.snapshot, tmp_path / f"{task.id}-work")
        expected = tree_files(git_tree(task.source.snapshot, tmp_path / f"{task.id}-expected", task.patch))
        adds, deletes = "\nnew file mode" in task.patch, "\ndeleted file mode" in task.patch
        can = "bash" in tools or ("edit" in tools and ("write_file" in tools or not adds) and not deletes)
        called, last = _play(task, tools, base)
        assert set(called) <= tools, (task.id, called)
        if can:
            assert tree_files(base) == expected, task.id
            assert called[-1] == "submit" if "submit" in tools else "Implemented the change" in last.content
        else:
            assert called == [] and "cannot make this change with the tools offered" in last.content, task.id


def test_oracle_asked_without_tools_says_what_it_needs(toy_task):
    turn = OraclePolicy([toy_task]).respond([{"role": "user", "content": toy_task.prompt}], [])
    assert not turn.tool_calls and "(none)" in turn.content and "`bash`" in turn.content


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
    first = replay.respond(messages, ALL_TOOLS)
    assert first.tool_calls[0].arguments == "{broken"
    messages.append({"role": "assistant"})
    assert replay.respond(messages, ALL_TOOLS).content == "done"
    messages.append({"role": "assistant"})
    assert "ends here" in replay.respond(messages, ALL_TOOLS).content


def test_replay_folder_matches_trajectories_by_prompt(tmp_path):
    _trajectory(tmp_path / "a.jsonl", "add power", [{"role": "assistant", "content": "A"}])
    _trajectory(tmp_path / "b.jsonl", "add logging", [{"role": "assistant", "content": "B"}])
    replay = ReplayPolicy(tmp_path)
    assert replay.respond([{"role": "user", "content": "Task: add logging\n"}], ALL_TOOLS).content == "B"
    assert replay.respond([{"role": "user", "content": "add power"}], ALL_TOOLS).content == "A"


def test_replay_of_something_else_is_one_clear_error(tmp_path):
    bad = tmp_path / "notes.jsonl"
    bad.write_text("hello\n")
    with pytest.raises(EvalkitError, match="notes.jsonl:1: not a JSON line"):
        ReplayPolicy(bad)
