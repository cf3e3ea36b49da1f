"""A complete chat.completion body told again as server-sent events, for an agent that asked for
`stream: true`: the proxy has the upstream's whole reply before it answers (it must record and
count it first), so the stream is built from it, in the chunk shapes OpenAI's API sends and the
SDKs assemble: the role and text, each tool call whole (index, id, name, arguments), the finish
reason, a usage chunk (empty `choices`) when `stream_options.include_usage` asks, then `[DONE]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

DONE = b"data: [DONE]\n\n"


def _event(chunk: dict) -> bytes:
    return b"data: " + json.dumps(chunk).encode() + b"\n\n"


def stream_events(body: dict, include_usage: bool) -> Iterator[bytes]:
    """The SSE events (bytes, each ending in a blank line) of `body`, `[DONE]` last."""
    head = {k: body[k] for k in ("id", "created", "model") if k in body}
    head["object"] = "chat.completion.chunk"
    choice = body["choices"][0]
    message = choice["message"]

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return _event({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    yield chunk({"role": "assistant", "content": message.get("content") or ""})
    if message.get("reasoning_content"):
        yield chunk({"reasoning_content": message["reasoning_content"]})
    for index, call in enumerate(message.get("tool_calls") or []):  # whole: nothing is gained by cutting it
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, choice.get("finish_reason") or "stop")
    if include_usage and "usage" in body:
        yield _event({**head, "choices": [], "usage": body["usage"]})
    yield DONE
