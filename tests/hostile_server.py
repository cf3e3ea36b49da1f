"""An OpenAI-compatible server evalkit has never seen, written for the tests with the standard
library only (no evalkit code): each scenario, served under `/<scenario>/v1`, scripts what every
conversation step gets, including HTTP errors, hangs, floods and malformed tool calls.

A script is a list of steps; the step is the number of assistant messages in the request. Each
step is a list of actions given to successive requests at that step (the last one repeats):

    {"status": 500}                          an HTTP error (optional "headers", "body")
    {"hang": 30}                             sleep before answering (the client should time out)
    {"trickle": True}                        an endless body, one byte at a time
    {"flood": 40_000_000}                    a 200 response with a body this large
    {"turn": {"content": ..., "calls": [(name, raw_arguments), ...]}, "usage": {...}}
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler

from scenario_server import ScenarioServer


def turn(
    *calls: tuple[str, str | dict], content: str | None = None, usage: dict | None = None, reasoning: str | None = None
) -> dict:
    raw = [(name, args if isinstance(args, str) else json.dumps(args)) for name, args in calls]
    return {"turn": {"content": content, "calls": raw, "reasoning": reasoning}, "usage": usage}


def _body(action: dict, step: int) -> dict:
    spec = action["turn"]
    calls = [
        {"id": f"call_{step}_{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(spec["calls"])
    ]
    message = {"role": "assistant", "content": spec["content"]}
    if spec.get("reasoning"):
        message["reasoning_content"] = spec["reasoning"]
    if calls:
        message["tool_calls"] = calls
    body = {
        "id": f"hostile-{step}",
        "object": "chat.completion",
        "created": 0,
        "model": "hostile",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
    }
    if action.get("usage") is not None:
        body["usage"] = action["usage"]
    return body


class HostileServer(ScenarioServer):
    """Serves `scenarios` (name → script) on 127.0.0.1; `requests` counts requests per scenario;
    `models` is what `GET /models` lists (None: no such route)."""

    def __init__(self, scenarios: dict[str, list[list[dict]]], models: list[str] | None = None) -> None:
        super().__init__(models)
        self.scenarios = scenarios
        self.requests: Counter[str] = Counter()
        self._seen: Counter[tuple[str, int]] = Counter()
        self._lock = threading.Lock()

    def handle(self, handler: BaseHTTPRequestHandler, scenario: str, request: dict) -> None:
        step = sum(1 for m in request["messages"] if m.get("role") == "assistant")
        with self._lock:
            self.requests[scenario] += 1
            n = self._seen[(scenario, step)]
            self._seen[(scenario, step)] += 1
        script = self.scenarios[scenario]
        actions = script[min(step, len(script) - 1)]
        self._act(handler, actions[min(n, len(actions) - 1)], step)

    def _act(self, handler: BaseHTTPRequestHandler, action: dict, step: int) -> None:
        try:
            if "hang" in action:
                time.sleep(action["hang"])
                return
            if "trickle" in action:
                handler.send_response(200)
                handler.send_header("Content-Type", "application/json")
                handler.end_headers()
                while True:
                    handler.wfile.write(b" ")
                    handler.wfile.flush()
                    time.sleep(0.01)
            if "flood" in action:
                handler.send_response(200)
                handler.send_header("Content-Type", "application/json")
                handler.send_header("Content-Length", str(action["flood"]))
                handler.end_headers()
                chunk = b"x" * 65536
                for _ in range(action["flood"] // len(chunk)):
                    handler.wfile.write(chunk)
                return
            if "status" in action:
                body = action.get("body") or {"error": {"message": f"HTTP {action['status']}"}}
                self.send_json(handler, action["status"], body, action.get("headers"))
            else:
                self.send_json(handler, 200, _body(action, step))
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should


def models_config(server: HostileServer, names, request_timeout_s: float = 2, max_retries: int = 1) -> str:
    """evalkit.toml text naming a model after each scenario of `server`, with short timeouts and
    few retries, so that a hostile scenario ends an attempt in seconds."""
    return "".join(
        f'[models.{name}]\nmodel = "hostile"\nbase_url = "{server.url(name)}"\n'
        f"request_timeout_s = {request_timeout_s}\nmax_retries = {max_retries}\nretry_base_s = 0.05\n"
        for name in names
    )
