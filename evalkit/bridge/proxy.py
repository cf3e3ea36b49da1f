"""The recording model proxy: one OpenAI-compatible server per run (`/v1/models`,
`/v1/chat/completions`, streamed or not) that agents inside sandboxes call instead of the model,
and `/v1/evalkit/ask_user`, where the `ask-user` command puts an attempt's questions to its
simulated user.

Each attempt registers an `AttemptChannel` and hands its agent the channel's random token as
`OPENAI_API_KEY` and `base_url` as `OPENAI_BASE_URL`; the proxy finds the attempt by the token
(`Authorization: Bearer ...`), so many attempts share one server and never see one another, and
the real key (read by the channel's ChatClient on the host) never reaches a container. An unknown
token is 401. Every error carries `x-should-retry: false` (the openai SDKs obey it): none changes on
a retry, and an SDK retrying an ended attempt only delays the agent's exit. The bind address is a
parameter: sandboxes reach the proxy on an address the network set-up chooses. Standard library
HTTP (HTTP/1.1, kept-alive connections), one thread per connection.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from evalkit.bridge.channel import Answer, AttemptChannel, error_answer
from evalkit.models.sse import send_stream, wants_usage

MAX_REQUEST_BYTES = 64 * 1024 * 1024
ASK_USER_ROUTE = "/evalkit/ask_user"  # under the proxy's /v1: what `ask-user` in a sandbox posts to


class _Handler(BaseHTTPRequestHandler):
    server: _ProxyHTTPServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # kept-alive connections: a small write must not wait for an ACK (40 ms)

    def log_message(self, format: str, *args: object) -> None:  # the run's display is the log
        pass

    def _send(self, answer: Answer) -> None:
        data = json.dumps(answer.body).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if answer.status != 200:  # the same request gets the same error: the client already retried upstream
            self.send_header("x-should-retry", "false")
        self.end_headers()
        self.wfile.write(data)

    def _route(self) -> str:
        path = self.path.split("?")[0].rstrip("/")
        return path.removeprefix("/v1")  # agents configured without `/v1` reach the same routes

    def _channel(self) -> AttemptChannel | None:
        scheme, _, token = self.headers.get("Authorization", "").partition(" ")
        channel = self.server.channels.get(token.strip()) if scheme.lower() == "bearer" else None
        if channel is None:
            self._send(error_answer(401, "evalkit proxy: unknown API key", "invalid_request_error", "invalid_api_key"))
        return channel

    def do_GET(self) -> None:
        if self._route() != "/models":
            return self._send(error_answer(404, f"no route {self.path}", "invalid_request_error"))
        if channel := self._channel():
            model = {"id": channel.model, "object": "model", "created": 0, "owned_by": "evalkit"}
            self._send(Answer(200, {"object": "list", "data": [model]}))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length > MAX_REQUEST_BYTES:
            self.close_connection = True
            too_large = f"request body over {MAX_REQUEST_BYTES} bytes"
            return self._send(error_answer(413, too_large, "invalid_request_error"))
        body = self.rfile.read(length)
        route = self._route()
        if route not in ("/chat/completions", ASK_USER_ROUTE):
            return self._send(error_answer(404, f"no route {self.path}", "invalid_request_error"))
        channel = self._channel()
        if channel is None:
            return
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if not isinstance(request, dict):
            return self._send(error_answer(400, "the body is not a JSON object", "invalid_request_error"))
        if route == ASK_USER_ROUTE:
            return self._send(channel.ask_user(request))
        answer = channel.exchange(request)
        if answer.status == 200 and request.get("stream"):
            return send_stream(self, answer.body, wants_usage(request))
        self._send(answer)


class _ProxyHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    channels: dict[str, AttemptChannel]

    def handle_error(self, request: object, client_address: object) -> None:
        """An agent that hung up mid-answer (killed at its deadline) is no error of the proxy's."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ModelProxy:
    """The run's proxy on `host:port` (port 0: any free one), serving in a background thread
    from `start()` (or `with`) until `close()`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._httpd = _ProxyHTTPServer((host, port), _Handler)
        self._httpd.channels = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="evalkit-model-proxy", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def base_url(self) -> str:
        """The proxy's URL on its bind address; a sandbox may need another host name for it."""
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def register(self, channel: AttemptChannel) -> str:
        """Serve `channel` under its token (returned: the agent's API key)."""
        with self._lock:
            self._httpd.channels = {**self._httpd.channels, channel.token: channel}
        return channel.token

    def unregister(self, token: str) -> None:
        """Stop serving an attempt (its token gets 401 from now on); unknown tokens are ignored."""
        with self._lock:
            self._httpd.channels = {k: v for k, v in self._httpd.channels.items() if k != token}

    def start(self) -> ModelProxy:
        self._thread.start()
        return self

    def __enter__(self) -> ModelProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._thread.is_alive():
            self._httpd.shutdown()
        self._httpd.server_close()
