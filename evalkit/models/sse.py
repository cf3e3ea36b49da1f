"""A complete chat.completion body told again as server-sent events, for an agent that asked for
`stream: true` (Qwen Code always does): the proxy has the upstream's whole reply before it answers
(it must record and count it first), and the built-in server's policies answer whole, so the
stream is built from it, in the chunk shapes OpenAI's API sends and the
SDKs assemble: the role and text, each tool call whole (index, id, name, arguments), the finish
reason, a usage chunk (empty `choices`) when `stream_options.include_usage` asks, then `[DONE]`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

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


def wants_usage(request: dict) -> bool:
    """Whether a streamed request asks for the usage chunk (`stream_options.include_usage`)."""
    options = request.get("stream_options")
    return isinstance(options, dict) and bool(options.get("include_usage"))


def send_stream(handler: BaseHTTPRequestHandler, body: dict, include_usage: bool) -> None:
    """Answer `handler`'s request with `body` as an event stream; the connection's end is the
    stream's end."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True
    handler.wfile.write(b"".join(stream_events(body, include_usage)))
