"""How an agent evalkit did not write wants its model to answer, read from one request: the shell
tool it offers (found by its schema, whatever its name), or the fenced block its prompt asks for
when it offers none, and the way it finishes. The built-in policies speak through this, so
`oracle` and `null` prove a suite through any agent, not only evalkit's own loop.

- A shell tool is a function named like a shell (`bash`, `shell`, `run_shell_command`,
  `execute_command`, ...) whose one required string parameter is the command, or any function
  whose only required parameter is a string named `command` or `cmd` (so `read_file(path)` is not
  one).
- Without one, a conversation that shows a fenced block of a shell language (```` ```bash ````,
  mini-swe-agent's ```` ```mswea_bash_command ````) is answered with one such block per turn.
- An agent that names a command to finish with ("issue `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`")
  is finished with it; one with a `submit` tool by calling it; any other by a plain message
  without a tool call.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

SUBMIT_TOOL = "submit"
SHELL = "bash"  # the name policies plan shell commands under, turned into the agent's own when they answer
SHELL_NAMES = frozenset(
    {"bash", "sh", "shell", "run_shell_command", "execute_command", "run_command", "execute_bash",
     "exec_command", "terminal", "run_terminal_cmd", "shell_exec", "command"}
)  # fmt: skip
PLANNED_ARGUMENTS = {"edit": {"path", "old_string", "new_string"}, "write_file": {"path", "content"}}
COMMAND_ARGS = ("command", "cmd")  # what a shell tool's one required string is called, by preference
_FENCE = re.compile(r"```([A-Za-z0-9_+-]*(?:bash|shell|sh|zsh)[A-Za-z0-9_+-]*)[ \t]*\n", re.IGNORECASE)
_FINISH = re.compile(r"`(echo [A-Z][A-Z0-9_]{7,})`")


@dataclass(frozen=True)
class ShellTool:
    name: str
    argument: str  # the parameter that takes the command


def _function(schema: object) -> tuple[str, dict] | None:
    function = schema.get("function") if isinstance(schema, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        return None
    parameters = function.get("parameters")
    return function["name"], parameters if isinstance(parameters, dict) else {}


def _required_strings(parameters: dict) -> list[str]:
    properties = parameters.get("properties") if isinstance(parameters.get("properties"), dict) else {}
    required = parameters.get("required") if isinstance(parameters.get("required"), list) else []
    return [r for r in required if isinstance(properties.get(r), dict) and properties[r].get("type") == "string"]


def shell_tool(tools: Sequence[object]) -> ShellTool | None:
    """The shell tool among a request's tool schemas: by name first, else by its one parameter."""
    by_schema = None
    for schema in tools:
        found = _function(schema)
        if found is None:
            continue
        name, parameters = found
        strings = _required_strings(parameters)
        preferred = next((a for a in COMMAND_ARGS if a in strings), None)
        if name.lower() in SHELL_NAMES and (preferred or len(strings) == 1):
            return ShellTool(name, preferred or strings[0])
        if by_schema is None and len(parameters.get("required") or []) == 1 and preferred:
            by_schema = ShellTool(name, preferred)
    return by_schema


def tool_names(tools: Sequence[object]) -> frozenset[str]:
    return frozenset(found[0] for schema in tools if (found := _function(schema)) is not None)


def _takes_planned_arguments(name: str, parameters: dict) -> bool:
    """Whether a tool the policies call by name (`edit`, `write_file`) takes the arguments they
    send; one that does not (Qwen Code's `edit(file_path, ...)`) is left to the shell."""
    wanted = PLANNED_ARGUMENTS.get(name)
    properties = parameters.get("properties")
    if wanted is None or not properties:  # not planned by name, or a schema that says nothing
        return True
    return isinstance(properties, dict) and wanted <= properties.keys()


def plannable_names(tools: Sequence[object]) -> frozenset[str]:
    """The tools offered that the policies may call by their own names and arguments."""
    return frozenset(
        found[0] for schema in tools if (found := _function(schema)) is not None and _takes_planned_arguments(*found)
    )


def _instructions(messages: list[dict]) -> str:
    """The system messages and the first user message: where an agent says how to answer."""
    texts, user_seen = [], False
    for message in messages:
        role, content = message.get("role"), message.get("content")
        text = content if isinstance(content, str) else ""
        if isinstance(content, list):
            text = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
        if role == "system" or (role == "user" and not user_seen):
            texts.append(text)
        user_seen = user_seen or role == "user"
    return "\n".join(texts)


@dataclass(frozen=True)
class Dialect:
    """What one request offers and asks for."""

    names: frozenset[str]  # the tools offered, by name
    shell: ShellTool | None = None
    fence: str | None = None  # text mode: the language tag of the block to answer with (no shell tool)
    finish_command: str | None = None  # the command that ends the agent's run, when it names one
    plannable: frozenset[str] | None = None  # of `names`, those policies may call as their own (None: all)

    @classmethod
    def of(cls, messages: list[dict], tools: Sequence[object]) -> Dialect:
        text = _instructions(messages)
        shell = shell_tool(tools)
        fence = None if shell is not None else next(iter(_FENCE.findall(text)), None)
        finish = _FINISH.search(text)
        return cls(tool_names(tools), shell, fence, finish[1] if finish else None, plannable_names(tools))

    @property
    def usable(self) -> frozenset[str]:
        """The tools a policy may plan with: those offered, plus `bash` when a shell is reachable
        (under another name, or as a fenced block)."""
        own = self.names if self.plannable is None else self.plannable
        return own | ({SHELL} if self.shell or self.fence else frozenset())
