"""The built-in policies speak to agents evalkit did not write: the shell tool is found by its
schema whatever its name, a conversation without tools that asks for fenced blocks gets one block
per turn, and each agent is finished its own way (a finishing command, `submit`, a plain message).
Conversations are played out on a real git tree, as the agent would run the commands."""

import re
import subprocess
from pathlib import Path

import pytest
from toy import git_tree, tree_files

from evalkit.agent.tools import TOOL_SCHEMAS
from evalkit.models.dialect import Dialect, ShellTool, shell_tool
from evalkit.models.policies import ORACLE_PATCH_PATH, NullPolicy, OraclePolicy

FINISH = "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
# mini-swe-agent 2.4.6's one tool (minisweagent/models/utils/actions_toolcall.py: BASH_TOOL)
MSWEA_BASH = {
    "type": "function",
    "function": {
        "name": "bash",
        "description": "Execute a bash command",
        "parameters": {
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The bash command to execute"}},
            "required": ["command"],
        },
    },
}
# its default instance template says how to finish; its text-based config asks for this block
MSWEA_INSTANCE = (
    "Please solve this issue: {task}\n\nSubmit your changes and finish your work by issuing the following "
    "command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`.\nDo not combine it with any other command."
)
MSWEA_TEXT_SYSTEM = (
    "Your response must contain exactly ONE bash code block with ONE command.\n<format_example>\n"
    "THOUGHT: reasoning\n\n```mswea_bash_command\nyour_command_here\n```\n</format_example>"
)
MSWEA_ACTION = re.compile(r"```mswea_bash_command\s*\n(.*?)\n```", re.DOTALL)  # its action_regex


def _function(name: str, properties: dict, required: list[str]) -> dict:
    schema = {"type": "object", "properties": properties, "required": required}
    return {"type": "function", "function": {"name": name, "description": "", "parameters": schema}}


STRING = {"type": "string"}
QWEN_SHELL = _function(
    "run_shell_command", {"command": STRING, "description": STRING, "directory": STRING}, ["command"]
)
READ_FILE = _function("read_file", {"path": STRING}, ["path"])
WRITE_FILE = _function("write_file", {"path": STRING, "content": STRING}, ["path", "content"])


@pytest.mark.parametrize(
    ("tools", "found"),
    [
        ([MSWEA_BASH], ShellTool("bash", "command")),
        (list(TOOL_SCHEMAS), ShellTool("bash", "command")),
        ([READ_FILE, QWEN_SHELL, WRITE_FILE], ShellTool("run_shell_command", "command")),
        ([_function("execute_command", {"cmd": STRING, "timeout": {"type": "integer"}}, ["cmd"])],
         ShellTool("execute_command", "cmd")),
        ([_function("Shell", {"script": STRING}, ["script"])], ShellTool("Shell", "script")),
        ([READ_FILE, _function("run_it", {"command": STRING}, ["command"])], ShellTool("run_it", "command")),
        ([READ_FILE, WRITE_FILE], None),  # one required string, but a path: not a shell
        ([_function("bash", {"restart": {"type": "boolean"}}, ["restart"])], None),  # no command to give
        ([], None),
    ],
    ids=["mswea", "tool-loop", "by-name", "cmd", "name-one-string", "by-schema", "no-shell", "no-command", "none"],
)  # fmt: skip
def test_the_shell_tool_is_found_by_its_schema(tools, found):
    assert shell_tool(tools) == found


def test_without_tools_a_conversation_asking_for_fenced_blocks_is_text_mode():
    messages = [{"role": "system", "content": MSWEA_TEXT_SYSTEM}, {"role": "user", "content": MSWEA_INSTANCE}]
    dialect = Dialect.of(messages, [])
    assert (dialect.shell, dialect.fence, dialect.finish_command) == (None, "mswea_bash_command", FINISH)
    tooled = Dialect.of(messages, [MSWEA_BASH])  # a shell tool wins over the fences its prompt shows
    assert tooled.fence is None and tooled.shell == ShellTool("bash", "command")
    assert Dialect.of([{"role": "user", "content": "fix it"}], []).fence is None


def _run(command: str, work: Path, scratch: Path) -> str:
    done = subprocess.run(["bash", "-c", command.replace(ORACLE_PATCH_PATH, str(scratch / "o.patch"))],
                          cwd=work, capture_output=True, text=True)  # fmt: skip
    return f'{{"returncode": {done.returncode}, "output": {done.stdout + done.stderr!r}}}'


def _play(policy, task, system: str, tools: list[dict], work: Path) -> tuple[list[str], dict]:
    """The agent's side: run each command the policy gives (tool call or fenced block) in `work`
    until a turn has none; the commands run and the last turn."""
    scratch = work.parent / "scratch"
    scratch.mkdir(exist_ok=True)
    instance = MSWEA_INSTANCE.format(task=task.prompt)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": instance}]
    ran: list[str] = []
    for _ in range(20):
        turn = policy.respond(messages, tools)
        commands = [c.arguments for c in turn.tool_calls]
        blocks = MSWEA_ACTION.findall(turn.content or "")
        messages.append({"role": "assistant", "content": turn.content})
        if not commands and not blocks:
            return ran, {"content": turn.content, "calls": []}
        for command in [next(iter(a.values())) for a in commands] + blocks:
            ran.append(command)
            if command == FINISH:
                return ran, {"content": turn.content, "calls": [c.name for c in turn.tool_calls]}
            role = "tool" if commands else "user"
            messages.append({"role": role, "content": _run(command, work, scratch)})
    raise AssertionError("the policy never finished")


@pytest.mark.parametrize(
    ("system", "tools", "call"),
    [("You are a helpful assistant.", [MSWEA_BASH], "bash"), (MSWEA_TEXT_SYSTEM, [], None)],
    ids=["tool-calling", "text"],
)
def test_oracle_makes_the_change_through_mini_swe_agent_and_finishes_its_way(demo_suite, tmp_path, system, tools, call):
    task = next(t for t in demo_suite.tasks if t.id == "ledger-csv-import")
    work = git_tree(task.source.snapshot, tmp_path / "work")
    expected = tree_files(git_tree(task.source.snapshot, tmp_path / "expected", task.patch))
    ran, last = _play(OraclePolicy([task]), task, system, tools, work)
    assert tree_files(work) == expected
    assert ran[-1] == FINISH and last["calls"] == ([call] if call else [])


def _added_file(path: str, lines: list[str]) -> str:
    body = "".join(f"+{line}\n" for line in lines)
    header = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
    return f"{header}@@ -0,0 +1,{len(lines)} @@\n{body}"


@pytest.mark.parametrize(
    ("system", "tools"),
    [("You are a helpful assistant.", [MSWEA_BASH]), (MSWEA_TEXT_SYSTEM, [])],
    ids=["tool-calling", "text"],
)
def test_oracle_makes_a_change_too_large_for_one_command_through_mini_swe_agent(demo_suite, tmp_path, system, tools):
    """mini-swe-agent runs each command as `sh -c COMMAND`: one argument, which Linux caps at 128 KiB.
    A reference change of ~300 KB (real suites have them) must reach the tree all the same."""
    task = next(t for t in demo_suite.tasks if t.id == "ledger-csv-import")
    lines = [f"{i:06d} " + "x" * 72 for i in range(4000)]
    task = task.model_copy(update={"patch": task.patch + _added_file("data/fixture.txt", lines)})
    work = git_tree(task.source.snapshot, tmp_path / "work")
    expected = tree_files(git_tree(task.source.snapshot, tmp_path / "expected", task.patch))
    ran, _ = _play(OraclePolicy([task]), task, system, tools, work)
    assert tree_files(work) == expected
    assert max(map(len, ran)) < 128 * 1024


def test_oracle_through_a_shell_tool_of_another_name_ends_with_a_plain_message(toy_task, tmp_path):
    """An agent with no finish tool and no finishing command (Qwen Code's `run_shell_command`)."""
    work = git_tree(toy_task.source.snapshot, tmp_path / "work")
    expected = tree_files(git_tree(toy_task.source.snapshot, tmp_path / "expected", toy_task.patch))
    oracle, messages = OraclePolicy([toy_task]), [{"role": "user", "content": toy_task.prompt}]
    for _ in range(10):
        turn = oracle.respond(messages, [READ_FILE, QWEN_SHELL])
        messages.append({"role": "assistant", "content": turn.content})
        if not turn.tool_calls:
            break
        assert {c.name for c in turn.tool_calls} == {"run_shell_command"}
        for call in turn.tool_calls:
            messages.append({"role": "tool", "content": _run(call.arguments["command"], work, tmp_path)})
    assert not turn.tool_calls and "Implemented the change" in turn.content
    assert tree_files(work) == expected


@pytest.mark.parametrize(
    ("system", "tools", "content", "calls"),
    [
        ("You are a helpful assistant.", [MSWEA_BASH], None, [("bash", {"command": FINISH})]),
        (MSWEA_TEXT_SYSTEM, [], f"```mswea_bash_command\n{FINISH}\n```", []),
        ("You are a helpful assistant.", list(TOOL_SCHEMAS), None, [("submit", {"summary": "No changes made."})]),
        ("No finishing command here.", [QWEN_SHELL], "No changes made.", []),
    ],
    ids=["mswea-tools", "mswea-text", "tool-loop", "plain"],
)
def test_null_finishes_at_once_the_agents_way(system, tools, content, calls):
    instance = MSWEA_INSTANCE if "No finishing" not in system else "Please solve this issue."
    turn = NullPolicy().respond([{"role": "system", "content": system}, {"role": "user", "content": instance}], tools)
    assert [(c.name, c.arguments) for c in turn.tool_calls] == calls
    assert content is None or content in (turn.content or "")
