"""A standard-library OpenAI-compatible server for the unit tests that records what reaches it:
every request's JSON body, headers and arrival time, and how many requests it held at once.

Each scenario, served under `/<scenario>/v1`, is a list of actions given to successive requests
(the last one repeats), or a function of the request body returning an action:

    {"status": 500, "body": {...}, "headers": {...}}   an HTTP error (or any status and body)
    {"delay": 0.3, ...}                                 wait before answering
    {"sse": [chunk, ...]}                               a 200 event stream: each chunk a dict sent as
                                                        `data: {json}`, or a str sent as a raw line
    {"ping_forever": True}                              an event stream of keep-alives that never ends
    {}                                                  a completion calling `bash` (COMPLETION)
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

from scenario_server import ScenarioServer

COMPLETION = {
    "id": "rec-1",
    "object": "chat.completion",
    "created": 0,
    "model": "rec",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
}


@dataclass
class Received:
    scenario: str
    headers: dict[str, str]  # lower-cased names
    body: dict
    at: float  # time.monotonic() on arrival


class RecordingServer(ScenarioServer):
    def __init__(
        self, scenarios: dict[str, list[dict] | Callable[[dict], dict]], models: list[str] | None = None
    ) -> None:
        super().__init__(models)
        self.scenarios = scenarios
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def handle(self, handler: BaseHTTPRequestHandler, scenario: str, body: dict) -> None:
        received = Received(scenario, {k.lower(): v for k, v in handler.headers.items()}, body, time.monotonic())
        with self._lock:
            n = sum(1 for r in self.received if r.scenario == scenario)
            self.received.append(received)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        script = self.scenarios[scenario]
        action = script(body) if callable(script) else script[min(n, len(script) - 1)]
        try:
            time.sleep(action.get("delay", 0))
        finally:
            with self._lock:
                self.in_flight -= 1  # before answering, so that a quick next request is not counted twice
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # the client gave up
            self._answer(handler, action)

    def _answer(self, handler: BaseHTTPRequestHandler, action: dict) -> None:
        if "sse" in action or "ping_forever" in action:
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.end_headers()
            if action.get("ping_forever"):
                while True:
                    handler.wfile.write(b": ping\n\n")
                    handler.wfile.flush()
                    time.sleep(0.01)
            for chunk in action["sse"]:
                line = chunk if isinstance(chunk, str) else "data: " + json.dumps(chunk)
                handler.wfile.write(line.encode() + b"\n\n")
                handler.wfile.flush()
            return
        self.send_json(handler, action.get("status", 200), action.get("body", COMPLETION), action.get("headers"))

    def bodies(self, scenario: str) -> list[dict]:
        return [r.body for r in self.received if r.scenario == scenario]
