"""An attempt's tool calls read back from its trajectory events: each call's step (the `turn` of its
`tool` event, matched by call_id, else the number of assistant messages so far), name, decoded
arguments and fault. Any malformed event or argument is skipped or read as empty, never raised."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    step: int
    name: str
    arguments: dict[str, Any]
    fault: str | None


def tool_calls(events: list[dict]) -> Iterator[ToolCall]:
    """The assistant's tool calls in call order."""
    executed: dict[str, deque[dict]] = {}
    for event in events:
        if isinstance(event, dict) and event.get("type") == "tool" and isinstance(event.get("call_id"), str):
            executed.setdefault(event["call_id"], deque()).append(event)
    assistant_messages = 0
    for event in events:
        message = event.get("message") if isinstance(event, dict) and event.get("type") == "message" else None
        if not isinstance(message, dict) or message.get("role") != "assistant":
            continue
        assistant_messages += 1
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            function = call.get("function") if isinstance(call.get("function"), dict) else {}
            queue = executed.get(call["id"]) if isinstance(call.get("id"), str) else None
            tool = queue.popleft() if queue else {}
            turn = tool.get("turn")
            step = turn if isinstance(turn, int) and not isinstance(turn, bool) else assistant_messages
            fault = tool.get("fault") if isinstance(tool.get("fault"), str) else None
            yield ToolCall(step, str(function.get("name") or ""), _arguments(function.get("arguments")), fault)


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        decoded = json.loads(raw) if isinstance(raw, str | bytes) else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return decoded if isinstance(decoded, dict) else {}
