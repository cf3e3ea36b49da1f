"""A streamed chat completion (server-sent events) assembled into the body a non-streamed request
would have returned, so that one parser (`messages.parse_completion`) serves both.

Fed raw bytes as they arrive, so the caller keeps its own caps on total time and size: content
and reasoning deltas are concatenated, tool calls are gathered by `index` with their argument
fragments concatenated, and usage is taken from the last chunk that carries it (the final one
with `stream_options.include_usage`).
"""

from __future__ import annotations

import json

from evalkit.models.messages import REASONING_KEYS


class StreamError(Exception):
    """The server reported an error inside the stream (after its 200 status)."""


class StreamAssembler:
    def __init__(self) -> None:
        self._pending = bytearray()
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[int, dict] = {}
        self._head: dict = {}
        self._usage: dict | None = None
        self._finish: str | None = None
        self._done = False
        self._choices = 0

    def feed(self, data: bytes) -> None:
        self._pending += data
        while (end := self._pending.find(b"\n")) >= 0:
            line = bytes(self._pending[:end]).rstrip(b"\r")
            del self._pending[: end + 1]
            self._line(line)

    def _line(self, line: bytes) -> None:
        field, _, value = line.partition(b":")
        value = value.strip()
        if field == b"error":  # llama.cpp's way of failing mid-stream
            raise StreamError(value.decode(errors="replace"))
        if field != b"data" or not value:
            return  # comments (keep-alives), event names, ids, blank separators
        if value == b"[DONE]":
            self._done = True
            return
        chunk = json.loads(value)
        if not isinstance(chunk, dict):
            raise ValueError(f"a stream chunk that is not an object: {value[:200]!r}")
        if chunk.get("error"):
            raise StreamError(json.dumps(chunk["error"]))
        self._chunk(chunk)

    def _chunk(self, chunk: dict) -> None:
        for key in ("id", "model", "created"):
            if key in chunk and key not in self._head:
                self._head[key] = chunk[key]
        if isinstance(chunk.get("usage"), dict):
            self._usage = chunk["usage"]
        choices = chunk.get("choices")
        if not (isinstance(choices, list) and choices and isinstance(choices[0], dict)):
            return  # the usage chunk, or a keep-alive
        choice = choices[0]
        self._choices += 1
        if isinstance(choice.get("finish_reason"), str):
            self._finish = choice["finish_reason"]
        delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
        if isinstance(delta.get("content"), str):
            self._content.append(delta["content"])
        for key in REASONING_KEYS:
            if isinstance(delta.get(key), str):
                self._reasoning.append(delta[key])
                break
        for raw in delta.get("tool_calls") or []:
            if isinstance(raw, dict):
                self._tool_call(raw)

    def _tool_call(self, raw: dict) -> None:
        index = raw.get("index")
        if not isinstance(index, int):  # servers that send whole calls without an index
            known = [i for i, c in self._calls.items() if raw.get("id") and c["id"] == raw.get("id")]
            index = known[0] if known else len(self._calls)
        call = self._calls.setdefault(index, {"id": None, "name": "", "arguments": ""})
        if raw.get("id") and not call["id"]:
            call["id"] = str(raw["id"])
        function = raw.get("function") if isinstance(raw.get("function"), dict) else {}
        name = function.get("name")
        if isinstance(name, str) and name != call["name"]:  # a repeated full name is not appended
            call["name"] += name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            call["arguments"] += arguments
        elif arguments is not None:
            call["arguments"] = json.dumps(arguments)

    def completion(self) -> dict:
        """The chat.completion body; ValueError if the stream stopped before its end."""
        if self._pending.strip():
            self._line(bytes(self._pending).rstrip(b"\r"))
            self._pending.clear()
        if not self._choices:
            raise ValueError("the stream held no choice")
        if not self._done and self._finish is None:
            raise ValueError("the stream ended before a finish_reason or [DONE]")
        message: dict = {"role": "assistant", "content": "".join(self._content) if self._content else None}
        if self._reasoning:
            message["reasoning_content"] = "".join(self._reasoning)
        if self._calls:
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
                for _, c in sorted(self._calls.items())
            ]
        body = {
            **self._head,
            "object": "chat.completion",
            "choices": [{"index": 0, "message": message, "finish_reason": self._finish}],
        }
        if self._usage is not None:
            body["usage"] = self._usage
        return body
