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
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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


class HostileServer:
    """Serves `scenarios` (name → script) on 127.0.0.1; `requests` counts requests per scenario."""

    def __init__(self, scenarios: dict[str, list[list[dict]]]) -> None:
        self.scenarios = scenarios
        self.requests: Counter[str] = Counter()
        self._seen: Counter[tuple[str, int]] = Counter()
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                scenario = self.path.strip("/").split("/")[0]
                step = sum(1 for m in request["messages"] if m.get("role") == "assistant")
                with outer._lock:
                    outer.requests[scenario] += 1
                    n = outer._seen[(scenario, step)]
                    outer._seen[(scenario, step)] += 1
                script = outer.scenarios[scenario]
                actions = script[min(step, len(script) - 1)]
                outer._act(self, actions[min(n, len(actions) - 1)], step)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

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
                data = json.dumps(action.get("body") or {"error": {"message": f"HTTP {action['status']}"}}).encode()
                handler.send_response(action["status"])
                for key, value in action.get("headers", {}).items():
                    handler.send_header(key, value)
            else:
                data = json.dumps(_body(action, step)).encode()
                handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up, as it should

    def url(self, scenario: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/{scenario}/v1"

    def __enter__(self) -> HostileServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
