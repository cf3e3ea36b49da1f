"""The run's one model proxy: started the first time a run needs it (an agent whose sandboxes
reach only the proxy), bound where the backend says its proxied sandboxes reach the host, told to
the backend as its `proxy` route, and closed with the run."""

from __future__ import annotations

import threading

from evalkit.bridge.channel import AttemptChannel
from evalkit.bridge.proxy import ModelProxy
from evalkit.sandbox.egress import ProxyRoute
from evalkit.sandbox.protocol import ModelProxyRoute, SandboxBackend, require


class RunProxy:
    """A `ModelProxy` for `backend`'s run, made on `start()` (safe to call again), removed on
    `close()`; a run that never starts it binds no port."""

    def __init__(self, backend: SandboxBackend) -> None:
        self._backend = backend
        self._route: ModelProxyRoute | None = None
        self._proxy: ModelProxy | None = None
        self._lock = threading.Lock()

    def start(self) -> ModelProxy:
        with self._lock:
            if self._proxy is None:
                route = require(self._backend, ModelProxyRoute, 'sandboxes of egress "proxy"')
                proxy = ModelProxy(route.proxy_host(), 0).start()
                route.proxy = ProxyRoute(*proxy.address)
                self._route = route
                self._proxy = proxy
            return self._proxy

    def register(self, channel: AttemptChannel) -> str:
        """Serve `channel` (the proxy started if it was not); its token, the agent's API key."""
        return self.start().register(channel)

    def unregister(self, token: str) -> None:
        if self._proxy is not None:
            self._proxy.unregister(token)

    @property
    def started(self) -> bool:
        return self._proxy is not None

    def close(self) -> None:
        with self._lock:
            if self._proxy is not None:
                self._proxy.close()
                self._proxy = None
                if self._route is not None:
                    self._route.proxy = None

    def __enter__(self) -> RunProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
