"""The built-in OpenAI-compatible server: `/v1/models` and `/v1/chat/completions` (with tool
calls and usage, streamed when asked: agents such as Qwen Code always ask) on 127.0.0.1, answering
as reference policies. Real HTTP, so the agent's code path through the `openai` SDK is the one used
against any other endpoint."""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from evalkit.models.policies import AssistantTurn, Policy
from evalkit.models.sse import send_stream, wants_usage


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def offered_tools(tools: object) -> list[dict]:
    """The tool schemas a request's `tools` offers (none when absent); TypeError when `tools` is
    not a list of {"type": "function", "function": {"name": ...}}."""
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise TypeError("tools must be a list")
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise TypeError("each tool needs function.name")
    return tools


def completion_body(model: str, turn: AssistantTurn, prompt_text: str) -> dict:
    """A chat.completion object for one assistant turn."""
    tool_calls = [
        {
            "id": f"call_{secrets.token_hex(6)}",
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments),
            },
        }
        for call in turn.tool_calls
    ]
    message: dict = {"role": "assistant", "content": turn.content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    completion_text = (turn.content or "") + "".join(c["function"]["arguments"] for c in tool_calls)
    prompt_tokens, completion_tokens = _approx_tokens(prompt_text), _approx_tokens(completion_text)
    return {
        "id": f"chatcmpl-{secrets.token_hex(8)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class _Handler(BaseHTTPRequestHandler):
    server: _PolicyHTTPServer

    def log_message(self, format: str, *args: object) -> None:  # keep test and CLI output clean
        pass

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, kind: str) -> None:
        self._send(status, {"error": {"message": message, "type": kind, "param": None, "code": None}})

    def _refused(self) -> bool:
        """With a token, a request without `Authorization: Bearer <token>` gets 401: a server bound
        beyond loopback (a cluster run) must not hand reference answers to whoever reaches it."""
        token = self.server.token
        if token is None or secrets.compare_digest(self.headers.get("Authorization", ""), f"Bearer {token}"):
            return False
        self._error(401, "this built-in model server wants its run's token", "authentication_error")
        return True

    def do_GET(self) -> None:
        if self._refused():
            return None
        if self.path.rstrip("/") != "/v1/models":
            return self._error(404, f"no route {self.path}", "invalid_request_error")
        models = [{"id": name, "object": "model", "created": 0, "owned_by": "evalkit"} for name in self.server.policies]
        self._send(200, {"object": "list", "data": models})

    def do_POST(self) -> None:
        if self._refused():
            return None
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self._error(404, f"no route {self.path}", "invalid_request_error")
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            messages = request["messages"]
            model = request["model"]
            tools = offered_tools(request.get("tools"))
        except (ValueError, KeyError, TypeError):
            return self._error(
                400, "body must be JSON with `model`, `messages` and optionally a `tools` list", "invalid_request_error"
            )
        policy = self.server.policies.get(model)
        if policy is None:
            return self._error(
                404,
                f"model `{model}` does not exist (known: {', '.join(self.server.policies)})",
                "invalid_request_error",
            )
        body = completion_body(model, policy.respond(messages, tools), json.dumps(messages))
        if request.get("stream"):
            return send_stream(self, body, wants_usage(request))
        self._send(200, body)


class _PolicyHTTPServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], policies: dict[str, Policy], token: str | None) -> None:
        super().__init__(address, _Handler)
        self.policies = policies
        self.token = token


class ModelServer:
    """Serve `policies` (model name → policy) on 127.0.0.1 in a background thread; on another
    `host` (workers of a cluster reach it at `advertised` host), only to callers with `token`."""

    def __init__(
        self,
        policies: dict[str, Policy],
        host: str = "127.0.0.1",
        port: int = 0,
        token: str | None = None,
        advertised: str | None = None,
    ) -> None:
        self._httpd = _PolicyHTTPServer((host, port), policies, token)
        self._advertised = advertised
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="evalkit-model-server", daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{self._advertised or host}:{port}/v1"

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
