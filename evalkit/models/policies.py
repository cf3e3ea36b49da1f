"""Reference policies played by the built-in server: they prove a suite end to end.

A policy sees the whole conversation (the server keeps no state) and the tool schemas the request
offers, and returns the next assistant turn. `oracle` applies the task's reference change
through the tools offered and finishes; `null` finishes at once, changing nothing; `replay` plays
back the assistant turns of recorded trajectories (as recorded, whatever the tools). The oracle
and null speak each agent's own dialect (dialect.py): its shell tool whatever its name, or a
fenced block when it offers no tool, and its way of finishing (`submit`, a finishing command, or
a plain message).
"""

from __future__ import annotations

import base64
import json
import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from unidiff import LINE_TYPE_ADDED, LINE_TYPE_CONTEXT, LINE_TYPE_REMOVED

from evalkit.diffs import GIT_APPLY, changed_paths, diff_bytes, has_raw_bytes, parsed_diff
from evalkit.errors import EvalkitError
from evalkit.models.dialect import SHELL, SUBMIT_TOOL, Dialect
from evalkit.tasks.model import Task

# not under /tmp/evalkit, which the integrity scan reads as probing the harness
ORACLE_PATCH_PATH = "/tmp/oracle-change.patch"
ERROR_PREFIX = "Error:"  # how the agent's tools start a failed call's message
ORACLE_TOOLS = frozenset({"bash", "edit", "write_file", "submit"})  # what the oracle can use, when offered


@dataclass(frozen=True)
class ToolCall:
    """One function call. `arguments` is sent as JSON, or verbatim when it is a string (replay of
    malformed calls)."""

    name: str
    arguments: dict | str


@dataclass(frozen=True)
class AssistantTurn:
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


class Policy(Protocol):
    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        """The next assistant turn after `messages`, calling only tools `tools` (the request's
        tool schemas, as sent) offers."""
        ...


def _assistant_turns(messages: list[dict]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant")


def _text(content: object) -> str:
    if isinstance(content, list):  # content parts
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _first_user_text(messages: list[dict]) -> str:
    return next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")


def _task_in(messages: list[dict], by_prompt: list[tuple[str, object]]) -> object | None:
    """The entry whose prompt appears in the first user message (longest prompt first)."""
    text = _first_user_text(messages)
    return next((value for prompt, value in by_prompt if prompt and prompt in text), None)


def _speak(turn: AssistantTurn, dialect: Dialect) -> AssistantTurn:
    """A planned turn as the agent takes it: its `bash` calls through the agent's shell tool, or
    (text mode) the command as one fenced block."""
    shell = dialect.shell
    if dialect.fence is not None and [c.name for c in turn.tool_calls] == [SHELL]:
        command = turn.tool_calls[0].arguments["command"]  # type: ignore[index]  # planned: always a dict
        return AssistantTurn(content=f"{turn.content or 'Next step.'}\n\n```{dialect.fence}\n{command}\n```")
    if shell is None or (shell.name == SHELL and shell.argument == "command"):
        return turn
    calls = [
        ToolCall(shell.name, {shell.argument: c.arguments["command"]}) if c.name == SHELL else c  # type: ignore[index]
        for c in turn.tool_calls
    ]
    return AssistantTurn(turn.content, calls)


def _finish(summary: str, dialect: Dialect) -> AssistantTurn:
    """The last turn: `submit` when it is offered, else the agent's own finishing command (mini-swe-agent's
    `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`) when it names one, else the summary as plain text."""
    if SUBMIT_TOOL in dialect.names:
        return AssistantTurn(tool_calls=[ToolCall(SUBMIT_TOOL, {"summary": summary})])
    if dialect.finish_command is not None and SHELL in dialect.usable:
        return _speak(AssistantTurn(summary, [ToolCall(SHELL, {"command": dialect.finish_command})]), dialect)
    return AssistantTurn(content=summary)


class NullPolicy:
    """Gives up at once: finishes without touching anything."""

    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        return _finish("No changes made.", Dialect.of(messages, tools))


def _hunk_sides(hunk) -> tuple[str, str]:
    """The text a hunk expects (context + removed) and the text it leaves (context + added)."""
    old: list[str] = []
    new: list[str] = []
    for line in hunk:
        if line.line_type in (LINE_TYPE_CONTEXT, LINE_TYPE_REMOVED):
            old.append(line.value)
        if line.line_type in (LINE_TYPE_CONTEXT, LINE_TYPE_ADDED):
            new.append(line.value)
    return "".join(old), "".join(new)


def _write_command(path: str, content: str) -> str:
    """A shell command writing `content` to `path` exactly (base64 through a quoted heredoc, so no
    byte of the content is read by the shell)."""
    encoded = base64.b64encode(diff_bytes(content)).decode()
    parent = posixpath.dirname(path)
    mkdir = f"mkdir -p -- {shlex.quote(parent)} && " if parent else ""
    return f"{mkdir}base64 -d > {shlex.quote(path)} <<'ORACLE_EOF'\n{encoded}\nORACLE_EOF"


# Agents that run a command as `sh -c COMMAND` pass it as one argument, which Linux caps at 128 KiB
# (MAX_ARG_STRLEN: "Argument list too long"); a larger write is staged in pieces below it.
COMMAND_PIECE = 64 * 1024


def _write_commands(path: str, content: str) -> list[str]:
    """`_write_command`, split into commands of at most ~COMMAND_PIECE bytes when it is larger: the
    base64 text appended piece by piece to a staging file, decoded into `path` by the last."""
    encoded = base64.b64encode(diff_bytes(content)).decode()
    if len(encoded) <= COMMAND_PIECE:
        return [_write_command(path, content)]
    staged = shlex.quote(path + ".b64")
    pieces = [encoded[i : i + COMMAND_PIECE] for i in range(0, len(encoded), COMMAND_PIECE)]
    commands = [
        f"cat {'>' if i == 0 else '>>'} {staged} <<'ORACLE_EOF'\n{piece}\nORACLE_EOF" for i, piece in enumerate(pieces)
    ]
    parent = posixpath.dirname(path)
    mkdir = f"mkdir -p -- {shlex.quote(parent)} && " if parent else ""
    commands.append(f"{mkdir}base64 -d < {staged} > {shlex.quote(path)} && rm -f {staged}")
    return commands


def _write(path: str, content: str, tools: frozenset[str]) -> ToolCall | None:
    """`write_file` when offered, else the same through `bash`; None when neither is offered."""
    if "write_file" in tools:
        return ToolCall("write_file", {"path": path, "content": content})
    return ToolCall("bash", {"command": _write_command(path, content)}) if "bash" in tools else None


def oracle_plan(patch: str, tools: frozenset[str] = ORACLE_TOOLS) -> list[list[ToolCall]] | None:
    """One assistant turn per changed file: `write_file` (or `bash`) for new files, one `edit` per
    hunk for changed ones, `bash rm` for deleted ones. None when the patch needs more than the
    offered tools can express exactly (binary files, renames, missing final newlines, no `edit`):
    the oracle then applies the patch with `git apply` (`patch_plan`)."""
    if re.search(r"^(\\ No newline at end of file|GIT binary patch|Binary files .* differ)$", patch, re.M):
        return None
    if "\r" in patch or has_raw_bytes(patch):  # bytes a tool call's JSON text would not carry exactly
        return None
    try:
        files = parsed_diff(patch)
    except EvalkitError:
        return None
    turns: list[list[ToolCall]] = []
    for patched in files:
        if patched.is_rename or patched.is_binary_file or patched.source_file == patched.target_file == "/dev/null":
            return None
        if patched.is_added_file:
            content = "".join(line.value for hunk in patched for line in hunk if line.is_added)
            write = _write(patched.path, content, tools)
            if write is None:
                return None
            turns.append([write])
        elif patched.is_removed_file:
            if "bash" not in tools:
                return None
            turns.append([ToolCall("bash", {"command": f"rm -f -- {shlex.quote(patched.path)}"})])
        else:
            if "edit" not in tools:
                return None
            edits = []
            for hunk in patched:
                old, new = _hunk_sides(hunk)
                if not old:  # a pure insertion has nothing unique to anchor an edit on
                    return None
                edits.append(ToolCall("edit", {"path": patched.path, "old_string": old, "new_string": new}))
            turns.append(edits)
    return turns


def patch_plan(patch: str, tools: frozenset[str], reset: bool) -> list[list[ToolCall]] | None:
    """The reference patch written to a file and applied with `git apply` (after putting the tree
    back when `reset`); None without `bash`, which both need."""
    if "bash" not in tools:
        return None
    apply = f"{GIT_APPLY.shell(ORACLE_PATCH_PATH)} && rm -f {ORACLE_PATCH_PATH}"
    turns = [[ToolCall("bash", {"command": "git checkout -q -- . && git clean -fdq"})]] if reset else []
    if "write_file" in tools and not has_raw_bytes(patch):
        turns.append([ToolCall("write_file", {"path": ORACLE_PATCH_PATH, "content": patch})])
        turns.append([ToolCall("bash", {"command": apply})])
    else:
        *staging, last = _write_commands(ORACLE_PATCH_PATH, patch)
        turns += [[ToolCall("bash", {"command": command})] for command in staging]
        turns.append([ToolCall("bash", {"command": f"{last}\n{apply}"})])
    return turns


def _first_error_turn(messages: list[dict]) -> int | None:
    """Index (0-based) of the first assistant turn whose tool results included an error."""
    turn = -1
    for message in messages:
        if message.get("role") == "assistant":
            turn += 1
        elif message.get("role") == "tool" and _text(message.get("content")).startswith(ERROR_PREFIX):
            return turn
    return None


class OraclePolicy:
    """Applies the reference change with the tools the request offers, then submits.

    The task is recognised by its prompt inside the first user message. File by file when the
    tools allow (`edit`, `write_file`, `bash rm`); else, or if an edit fails (the hunk's text is not
    unique in the file, say), it resets the tree and writes the patch and runs `git apply`. Without
    the tools for either, it says so in text; without `submit`, it ends with a plain message.
    """

    def __init__(self, tasks: list[Task]) -> None:
        ordered = sorted(tasks, key=lambda t: len(t.prompt), reverse=True)
        self._tasks = [(t.prompt.strip(), t) for t in ordered]

    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        task = _task_in(messages, self._tasks)
        if not isinstance(task, Task):
            return AssistantTurn(content="The oracle does not know this task; nothing to do.")
        dialect = Dialect.of(messages, tools)
        tools_ = dialect.usable
        step = _assistant_turns(messages)
        plan = oracle_plan(task.patch, tools_)
        failed_at = _first_error_turn(messages)
        if plan is None or failed_at is not None:
            start = 0 if plan is None else failed_at + 1
            plan = patch_plan(task.patch, tools_, reset=plan is not None)
            if plan is None:
                offered = ", ".join(sorted(dialect.names)) or "none"
                return AssistantTurn(
                    content=f"The oracle cannot make this change with the tools offered ({offered}): it needs "
                    "`bash` to apply the patch, or `edit`, `write_file` and `bash` to make it file by file."
                )
            step -= start
        files = ", ".join(changed_paths(task.patch))
        turns = [_speak(AssistantTurn(tool_calls=calls), dialect) for calls in plan]
        turns.append(_finish(f"Implemented the change in {files}.", dialect))
        return turns[min(step, len(turns) - 1)]


class ReplayPolicy:
    """Plays back the assistant turns of recorded trajectories, byte for byte (malformed calls too).

    `path` is one trajectory (.jsonl) or a folder of them; a conversation is matched to the
    trajectory whose task prompt its first user message contains (a single trajectory matches
    any conversation). Past the recorded turns it answers with a plain message, which ends the
    attempt.
    """

    def __init__(self, path: Path) -> None:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        if not files:
            raise EvalkitError(f"{path}: no trajectory (.jsonl) to replay")
        self._recorded = [self._load(f) for f in files]
        self._by_prompt = sorted(self._recorded, key=lambda r: len(r[0]), reverse=True)

    @staticmethod
    def _load(path: Path) -> tuple[str, list[AssistantTurn]]:
        prompt, turns = "", []
        try:
            lines = path.read_text().splitlines()
        except OSError as exc:
            raise EvalkitError(f"{path}: cannot read the trajectory ({exc.strerror})") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                raise EvalkitError(f"{path}:{number}: not a JSON line; is this an evalkit trajectory?") from None
            message = event.get("message") if event.get("type") == "message" else None
            if not isinstance(message, dict):
                continue
            if message.get("role") == "user" and not prompt:
                prompt = _text(message.get("content")).strip()
            if message.get("role") == "assistant":
                calls = [
                    ToolCall(c["function"]["name"], c["function"].get("arguments") or "")
                    for c in message.get("tool_calls") or []
                ]
                turns.append(AssistantTurn(content=message.get("content"), tool_calls=calls))
        if not turns:
            raise EvalkitError(f"{path}: no assistant turn recorded; nothing to replay")
        return prompt, turns

    def respond(self, messages: list[dict], tools: Sequence[dict]) -> AssistantTurn:
        if len(self._recorded) == 1:
            turns = self._recorded[0][1]
        else:
            text = _first_user_text(messages)
            match = next((t for prompt, t in self._by_prompt if prompt and prompt in text), None)
            if match is None:
                return AssistantTurn(content="No recorded trajectory matches this task.")
            turns = match
        step = _assistant_turns(messages)
        if step >= len(turns):
            return AssistantTurn(content="The recorded trajectory ends here.")
        return turns[step]
