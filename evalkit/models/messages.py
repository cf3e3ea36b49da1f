"""Completion bodies in, conversation messages out, in the strictest form servers share.

Whatever a server returns, the assistant message put back into the conversation has `role`,
`content` (always a string: llama-cpp-python answers 500 "Input should be a valid string" to
`content: null`, and other pydantic-validated servers do the same) and `tool_calls` only when there
are some; nothing else, so reasoning text and vendor fields never travel back to a server that
would refuse them. Reasoning text is returned apart.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

REASONING_KEYS = ("reasoning_content", "reasoning")  # vLLM, DeepSeek, llama.cpp / OpenRouter, Ollama


@dataclass(frozen=True)
class Usage:
    """Tokens of one or more requests. `reported` is False when the provider gave no usage and
    the figures are estimates (characters / 4). `reasoning_tokens` are part of the completion."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    reported: bool = True
    reasoning_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reported and other.reported,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    def as_dict(self) -> dict:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "total_tokens": self.total_tokens,
            "reported": self.reported,
        }


def tool_message(call_id: str, name: str, content: str) -> dict:
    """A tool result as every server accepts it: `name` too, which some templates require."""
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def text_of(content: object) -> str:
    """Message content as one string: None is "", a list of parts is their text joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def reasoning_of(message: dict) -> str | None:
    """The reasoning text a server put beside the answer, under either of the usual keys."""
    for key in REASONING_KEYS:
        if isinstance(message.get(key), str) and message[key]:
            return message[key]
    return None


def _tool_call(raw: object) -> dict | None:
    if not isinstance(raw, dict):
        return None
    function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
    arguments = function.get("arguments")
    return {
        "id": str(raw.get("id") or f"call_{random.getrandbits(48):012x}"),
        "type": "function",
        "function": {
            "name": str(function.get("name") or ""),
            "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments),
        },
    }


def _usage(data: object) -> Usage | None:
    if not isinstance(data, dict) or not isinstance(data.get("prompt_tokens"), int):
        return None

    def detail(key: str, field: str) -> int:
        details = data.get(key)
        value = details.get(field) if isinstance(details, dict) else None
        return value if isinstance(value, int) else 0

    return Usage(
        data["prompt_tokens"],
        int(data.get("completion_tokens") or 0),
        detail("prompt_tokens_details", "cached_tokens"),
        True,
        detail("completion_tokens_details", "reasoning_tokens"),
    )


def _estimate(messages: list[dict], message: dict) -> Usage:
    return Usage(len(json.dumps(messages)) // 4, len(json.dumps(message)) // 4, 0, reported=False)


def parse_completion(data: dict, messages: list[dict]) -> tuple[dict, str | None, Usage, str | None] | None:
    """The assistant message (strict form), finish reason, usage and reasoning text of a
    completion body; None if it holds no usable message."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    raw_message = choices[0].get("message")
    if not isinstance(raw_message, dict):
        return None
    message: dict = {"role": "assistant", "content": text_of(raw_message.get("content"))}
    raw_calls = raw_message.get("tool_calls")
    calls = [c for c in map(_tool_call, raw_calls if isinstance(raw_calls, list) else []) if c]
    if calls:
        message["tool_calls"] = calls
    usage = _usage(data.get("usage")) or _estimate(messages, message)
    finish = choices[0].get("finish_reason")
    return message, finish if isinstance(finish, str) else None, usage, reasoning_of(raw_message)
