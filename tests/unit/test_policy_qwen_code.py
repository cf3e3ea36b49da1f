"""The built-in policies speak to Qwen Code as it asks: its tool schemas as 0.24.4 sent them
(tests/data/qwen_code_tools.json, descriptions dropped) and its conversation's shape (a system
prompt, the first user message as text parts with the task last, calls sent back re-serialized)."""

import json
from pathlib import Path

from evalkit.agent.tools import TOOL_SCHEMAS
from evalkit.models.dialect import Dialect
from evalkit.models.policies import NullPolicy, OraclePolicy

QWEN_TOOLS = json.loads((Path(__file__).parent.parent / "data" / "qwen_code_tools.json").read_text())


def opening(prompt: str) -> list[dict]:
    parts = ["<system-reminder>skills</system-reminder>", "<system-reminder>folder tree</system-reminder>", prompt]
    return [
        {"role": "system", "content": "You are Qwen Code, a non-interactive CLI agent."},
        {"role": "user", "content": [{"type": "text", "text": text} for text in parts]},
    ]


def test_its_edit_tools_take_file_path_so_the_oracle_plans_through_its_shell():
    dialect = Dialect.of(opening("anything"), QWEN_TOOLS)
    assert (dialect.shell.name, dialect.shell.argument) == ("run_shell_command", "command")
    assert {"edit", "write_file"} <= dialect.names
    assert not {"edit", "write_file"} & dialect.usable and "bash" in dialect.usable
    assert {"edit", "write_file", "bash"} <= Dialect.of(opening("anything"), TOOL_SCHEMAS).usable  # evalkit's own


def test_the_oracle_applies_the_change_through_run_shell_command_then_says_it_is_done(toy_task):
    oracle = OraclePolicy([toy_task])
    messages = opening(toy_task.prompt)
    first = oracle.respond(messages, QWEN_TOOLS)
    (call,) = first.tool_calls
    assert call.name == "run_shell_command" and set(call.arguments) == {"command"}
    assert "git apply" in call.arguments["command"]
    sent_back = {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
        "name": call.name, "arguments": json.dumps(call.arguments, separators=(",", ":"))}}]}  # fmt: skip
    result = {"role": "tool", "tool_call_id": "call_1", "content": [{"type": "text", "text": "Exit Code: 0"}]}
    last = oracle.respond([*messages, sent_back, result], QWEN_TOOLS)
    assert last.tool_calls == [] and last.content  # no submit tool: a plain message ends its run


def test_null_ends_its_run_at_once_with_a_plain_message(toy_task):
    turn = NullPolicy().respond(opening(toy_task.prompt), QWEN_TOOLS)
    assert turn.tool_calls == [] and turn.content
