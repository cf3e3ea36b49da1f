"""The agent's tools in a real sandbox, as the model experiences them."""

import json

import pytest

from evalkit.agent.tools import ToolBox
from evalkit.records import ToolFault

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tools(toy_task, backend):
    with backend.open(toy_task, role="tools-test") as sandbox:
        yield ToolBox(sandbox, command_timeout_s=5, output_limit=2000)


def call(tools, name, **arguments):
    return tools.run(name, json.dumps(arguments))


def test_write_then_read_creates_folders_as_the_sandbox_user(tools):
    assert call(tools, "write_file", path="pkg/deep/new.py", content="x = 'é'\n").fault is None
    assert call(tools, "read_file", path="pkg/deep/new.py").content == "x = 'é'\n"
    owner = call(tools, "bash", command="stat -c %u pkg/deep/new.py pkg/deep").content
    assert owner.split() == ["1000", "1000", "[exit", "code", "0]"]


def test_edit_replaces_one_exact_occurrence_and_refuses_absent_or_ambiguous(tools):
    call(tools, "write_file", path="e.py", content="a = 1\nb = 1\n")
    absent = call(tools, "edit", path="e.py", old_string="c = 1", new_string="c = 2")
    ambiguous = call(tools, "edit", path="e.py", old_string=" = 1", new_string=" = 2")
    assert absent.fault is ToolFault.TOOL_ERROR and "not found" in absent.content
    assert ambiguous.fault is ToolFault.TOOL_ERROR and "occurs 2 times" in ambiguous.content
    assert call(tools, "edit", path="e.py", old_string="b = 1", new_string="b = 2").fault is None
    assert call(tools, "read_file", path="e.py").content == "a = 1\nb = 2\n"


def test_search_finds_lines_and_says_when_nothing_matches(tools):
    found = call(tools, "search", pattern=r"def (add|mul)", path="calc")
    assert "calc/__init__.py:1:def add(a, b):" in found.content and found.fault is None
    assert call(tools, "search", pattern="no_such_symbol_anywhere").content == "No matches."


def test_reading_a_folder_or_missing_file_is_a_tool_error(tools):
    assert call(tools, "read_file", path="calc").fault is ToolFault.TOOL_ERROR
    missing = call(tools, "read_file", path="nope.py")
    assert missing.fault is ToolFault.TOOL_ERROR and "No such file" in missing.content


def test_bash_reports_exit_code_keeps_state_and_caps_output(tools):
    assert call(tools, "bash", command="cd calc && export X=7").content.endswith("[exit code 0]")
    assert call(tools, "bash", command="echo $X; pwd; (exit 3)").content == "7\n/workspace/calc\n[exit code 3]"
    call(tools, "bash", command="cd /workspace")
    flood = call(tools, "bash", command="seq 1 100000")
    assert flood.truncated and "evalkit truncated" in flood.content and len(flood.content) < 3000


def test_a_hanging_command_is_killed_at_the_timeout(tools):
    outcome = tools.run("bash", json.dumps({"command": "sleep 30", "timeout": 1}))
    assert outcome.fault is ToolFault.TIMEOUT and outcome.sandbox_s < 5


def test_files_the_sandbox_user_may_not_touch_are_tool_errors(tools):
    denied = call(tools, "write_file", path="/etc/evalkit-denied.txt", content="x")
    assert denied.fault is ToolFault.TOOL_ERROR and "Permission denied" in denied.content
    unreadable = call(tools, "read_file", path="/etc/shadow")
    assert unreadable.fault is ToolFault.TOOL_ERROR and "Permission denied" in unreadable.content
    assert call(tools, "edit", path="/etc/hostname", old_string=" ", new_string="x").fault is ToolFault.TOOL_ERROR


def test_a_100_kb_file_round_trips_and_paths_follow_the_shell(tools):
    content = "".join(f"line {i} é\n" for i in range(10_000))
    assert call(tools, "write_file", path="big/file.txt", content=content).fault is None
    assert call(tools, "bash", command="wc -c < big/file.txt").content.split()[0] == str(len(content.encode()))
    call(tools, "bash", command="cd big && ln -sf file.txt link.txt")
    try:
        assert call(tools, "edit", path="link.txt", old_string="line 0 é\n", new_string="first\n").fault is None
        assert call(tools, "bash", command="head -1 file.txt; test -L link.txt").content == "first\n[exit code 0]"
    finally:
        call(tools, "bash", command="cd /workspace")
