"""Reference policies played by the built-in server: they prove a suite end to end.

A policy sees the whole conversation (the server keeps no state) and returns the next assistant
turn. `oracle` applies the task's reference change through the agent's own tools and submits;
`null` submits nothing at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from evalkit.scoring.patches import changed_paths
from evalkit.tasks.model import Task

ORACLE_PATCH_PATH = "/tmp/evalkit-oracle.patch"


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: dict


@dataclass(frozen=True)
class AssistantTurn:
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)


class Policy(Protocol):
    def respond(self, messages: list[dict]) -> AssistantTurn: ...


def _assistant_turns(messages: list[dict]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant")


def _first_user_text(messages: list[dict]) -> str:
    for message in messages:
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):  # content parts
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return content or ""
    return ""


class NullPolicy:
    """Gives up at once: submits without touching anything."""

    def respond(self, messages: list[dict]) -> AssistantTurn:
        return AssistantTurn(tool_calls=[ToolCall("submit", {"summary": "No changes made."})])


class OraclePolicy:
    """Writes the reference patch with `write_file`, applies it with `bash`, then submits.

    The task is recognised by its prompt inside the first user message.
    """

    def __init__(self, tasks: list[Task]) -> None:
        self._tasks = sorted(tasks, key=lambda t: len(t.prompt), reverse=True)

    def _task_for(self, messages: list[dict]) -> Task | None:
        text = _first_user_text(messages)
        return next((t for t in self._tasks if t.prompt.strip() and t.prompt.strip() in text), None)

    def respond(self, messages: list[dict]) -> AssistantTurn:
        task = self._task_for(messages)
        if task is None:
            return AssistantTurn(content="The oracle does not know this task; nothing to do.")
        step = _assistant_turns(messages)
        if step == 0:
            return AssistantTurn(
                tool_calls=[ToolCall("write_file", {"path": ORACLE_PATCH_PATH, "content": task.patch})]
            )
        if step == 1:
            command = f"git apply --whitespace=nowarn {ORACLE_PATCH_PATH} && rm -f {ORACLE_PATCH_PATH}"
            return AssistantTurn(tool_calls=[ToolCall("bash", {"command": command})])
        files = ", ".join(changed_paths(task.patch))
        return AssistantTurn(tool_calls=[ToolCall("submit", {"summary": f"Applied the change to {files}."})])
