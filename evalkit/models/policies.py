"""Reference policies played by the built-in server: they prove a suite end to end.

A policy sees the whole conversation (the server keeps no state) and returns the next assistant
turn. `oracle` applies the task's reference change through the agent's own tools and submits;
`null` submits nothing at once; `replay` plays back the assistant turns of recorded trajectories.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from unidiff import LINE_TYPE_ADDED, LINE_TYPE_CONTEXT, LINE_TYPE_REMOVED, PatchSet
from unidiff.errors import UnidiffParseError

from evalkit.errors import EvalkitError
from evalkit.scoring.patches import changed_paths
from evalkit.tasks.model import Task

ORACLE_PATCH_PATH = "/tmp/evalkit-oracle.patch"
ERROR_PREFIX = "Error:"  # how the agent's tools start a failed call's message


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
    def respond(self, messages: list[dict]) -> AssistantTurn: ...


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


class NullPolicy:
    """Gives up at once: submits without touching anything."""

    def respond(self, messages: list[dict]) -> AssistantTurn:
        return AssistantTurn(tool_calls=[ToolCall("submit", {"summary": "No changes made."})])


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


def oracle_plan(patch: str) -> list[list[ToolCall]] | None:
    """One assistant turn per changed file: `write_file` for new files, one `edit` per hunk for
    changed ones, `bash rm` for deleted ones. None when the patch needs more than these tools can
    express exactly (binary files, renames, missing final newlines): the oracle then uses git apply."""
    if re.search(r"^(\\ No newline at end of file|GIT binary patch|Binary files .* differ)$", patch, re.M):
        return None
    try:
        files = PatchSet(patch)
    except UnidiffParseError:
        return None
    turns: list[list[ToolCall]] = []
    for patched in files:
        if patched.is_rename or patched.is_binary_file or patched.source_file == patched.target_file == "/dev/null":
            return None
        if patched.is_added_file:
            content = "".join(line.value for hunk in patched for line in hunk if line.is_added)
            turns.append([ToolCall("write_file", {"path": patched.path, "content": content})])
        elif patched.is_removed_file:
            turns.append([ToolCall("bash", {"command": f"rm -f -- {shlex.quote(patched.path)}"})])
        else:
            edits = []
            for hunk in patched:
                old, new = _hunk_sides(hunk)
                if not old:  # a pure insertion has nothing unique to anchor an edit on
                    return None
                edits.append(ToolCall("edit", {"path": patched.path, "old_string": old, "new_string": new}))
            turns.append(edits)
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
    """Applies the reference change with the agent's own tools, then submits.

    The task is recognised by its prompt inside the first user message. If an edit fails (the
    hunk's text is not unique in the file, say), the oracle resets the tree and falls back to
    writing the patch and `git apply`.
    """

    def __init__(self, tasks: list[Task]) -> None:
        ordered = sorted(tasks, key=lambda t: len(t.prompt), reverse=True)
        self._tasks = [(t.prompt.strip(), t) for t in ordered]

    def respond(self, messages: list[dict]) -> AssistantTurn:
        task = _task_in(messages, self._tasks)
        if not isinstance(task, Task):
            return AssistantTurn(content="The oracle does not know this task; nothing to do.")
        step = _assistant_turns(messages)
        plan = oracle_plan(task.patch)
        failed_at = _first_error_turn(messages)
        if plan is None or failed_at is not None:
            start = 0 if plan is None else failed_at + 1
            plan = self._fallback(task, reset=plan is not None)
            step -= start
        files = ", ".join(changed_paths(task.patch))
        plan.append([ToolCall("submit", {"summary": f"Implemented the change in {files}."})])
        return AssistantTurn(tool_calls=plan[min(step, len(plan) - 1)])

    @staticmethod
    def _fallback(task: Task, reset: bool) -> list[list[ToolCall]]:
        apply = f"git apply --whitespace=nowarn {ORACLE_PATCH_PATH} && rm -f {ORACLE_PATCH_PATH}"
        turns = [[ToolCall("bash", {"command": "git checkout -q -- . && git clean -fdq"})]] if reset else []
        turns.append([ToolCall("write_file", {"path": ORACLE_PATCH_PATH, "content": task.patch})])
        turns.append([ToolCall("bash", {"command": apply})])
        return turns


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

    def respond(self, messages: list[dict]) -> AssistantTurn:
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
