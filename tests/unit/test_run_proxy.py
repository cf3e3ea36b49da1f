"""The run's model proxy: no port until a run needs it, the backend told where it listens, and
nothing listening once the run is closed."""

import socket
from dataclasses import dataclass

import pytest

from evalkit.bridge.run_proxy import RunProxy
from evalkit.errors import SandboxError
from evalkit.sandbox.egress import ProxyRoute


@dataclass
class Backend:
    proxy: ProxyRoute | None = None
    asked: int = 0

    def proxy_host(self) -> str:
        self.asked += 1
        return "127.0.0.1"


def test_the_proxy_starts_once_on_the_backends_address_and_is_gone_after_the_run():
    backend = Backend()
    with RunProxy(backend) as run_proxy:
        assert not run_proxy.started and backend.proxy is None and backend.asked == 0
        proxy = run_proxy.start()
        assert run_proxy.start() is proxy and backend.asked == 1
        assert backend.proxy == ProxyRoute(*proxy.address) and proxy.address[0] == "127.0.0.1"
        socket.create_connection(proxy.address, timeout=5).close()
    assert backend.proxy is None and not run_proxy.started
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(proxy.address, timeout=5)


def test_a_run_that_never_needs_the_proxy_binds_nothing():
    backend = Backend()
    with RunProxy(backend) as run_proxy:
        run_proxy.unregister("evalkit-unknown")  # a token never served: nothing to do
    assert backend.asked == 0 and backend.proxy is None


def test_a_backend_that_cannot_relay_to_a_proxy_says_so_in_one_line():
    class WorkspacesOnly:
        run_id = "r1"

    with RunProxy(WorkspacesOnly()) as run_proxy, pytest.raises(SandboxError) as raised:  # type: ignore[arg-type]
        run_proxy.start()
    needs = 'sandboxes of egress "proxy" needs a backend with ModelProxyRoute; WorkspacesOnly has none'
    assert str(raised.value) == needs
