"""What the tests' OpenAI-compatible servers share: a threaded HTTP server on 127.0.0.1 that
hands each POST's JSON body and scenario (the first path segment of `/<scenario>/v1/...`) to the
subclass, a JSON answer, and start/stop as a context manager. Standard library only.

`GET /<scenario>/v1/models` lists `models` (every scenario the same list), or answers 404 when
`models` is None, as servers without that route do; `gets` counts those requests per scenario."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class ScenarioServer:
    def __init__(self, models: Sequence[str] | None = None) -> None:
        outer = self
        self.models = None if models is None else list(models)
        self.gets: Counter[str] = Counter()

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.handle(self, self.path.strip("/").split("/")[0], body)

            def do_GET(self) -> None:
                scenario = self.path.strip("/").split("/")[0]
                outer.gets[scenario] += 1
                if outer.models is None or not self.path.rstrip("/").endswith("/models"):
                    outer.send_json(self, 404, {"error": {"message": f"no route {self.path}"}})
                else:
                    listed = [{"id": m, "object": "model", "owned_by": "tests"} for m in outer.models]
                    outer.send_json(self, 200, {"object": "list", "data": listed})

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def handle(self, handler: BaseHTTPRequestHandler, scenario: str, body: dict) -> None:
        raise NotImplementedError

    @staticmethod
    def send_json(handler: BaseHTTPRequestHandler, status: int, body: object, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        for key, value in (headers or {}).items():
            handler.send_header(key, value)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def url(self, scenario: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/{scenario}/v1"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
