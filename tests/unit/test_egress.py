"""What a sandbox may reach, as asked for: `egress` when given, else the older `network` flag,
and a contradiction refused; and the relay of a proxied sandbox, run here on loopback (no Docker),
pipes a streamed answer through whole and passes each side's end on; the host's address on the
default bridge is read from the bridge's IPAM config as the engine reports it."""

import socket
import subprocess
import sys
import threading

import pytest

from evalkit.errors import SandboxError
from evalkit.sandbox import relay_server
from evalkit.sandbox.docker.proxy_net import bridge_gateway
from evalkit.sandbox.egress import ProxyRoute, resolve_egress
from evalkit.sandbox.protocol import SandboxRequest


@pytest.mark.parametrize(
    ("network", "egress", "resolved"),
    [(False, None, "none"), (True, None, "full"), (False, "proxy", "proxy"), (False, "full", "full"),
     (True, "full", "full"), (False, "none", "none")],
)
def test_egress_is_what_was_asked_or_what_network_meant(network, egress, resolved):
    assert resolve_egress(network, egress) == resolved


@pytest.mark.parametrize(
    ("config", "gateway"),
    [
        # dockerd 20.10 after a restart, or with --bip: the bridge's address is the gateway
        ([{"Subnet": "172.17.0.0/16", "Gateway": "172.17.0.1"}], "172.17.0.1"),
        ([{"Subnet": "10.5.0.0/24", "Gateway": "10.5.0.7"}], "10.5.0.7"),
        # the same engine's first start, when it made docker0 itself: no Gateway, the subnet's first host
        ([{"Subnet": "172.17.0.0/16"}], "172.17.0.1"),
        ([{"Subnet": "fd00::/64", "Gateway": "fd00::1"}, {"Subnet": "192.168.9.0/24"}], "192.168.9.1"),
    ],
)
def test_the_hosts_address_on_the_default_bridge(config, gateway):
    assert bridge_gateway(config) == gateway


@pytest.mark.parametrize("config", [[], [{"Subnet": "fd00::/64", "Gateway": "fd00::1"}]])
def test_a_bridge_without_ipv4_is_one_line(config):
    with pytest.raises(SandboxError, match="no IPv4 address"):
        bridge_gateway(config)


@pytest.mark.parametrize(("network", "egress"), [(True, "proxy"), (True, "none"), (False, "internet")])
def test_a_contradiction_or_an_unknown_egress_is_refused(network, egress):
    with pytest.raises(ValueError, match="egress"):
        resolve_egress(network, egress)


def test_requests_are_interchangeable_by_egress_not_by_how_it_was_asked(toy_task):
    assert SandboxRequest(toy_task, "agent", True).key == SandboxRequest(toy_task, "agent", egress="full").key
    assert SandboxRequest(toy_task, "agent").key != SandboxRequest(toy_task, "agent", egress="proxy").key
    with pytest.raises(ValueError):
        SandboxRequest(toy_task, "agent", True, egress="proxy")


@pytest.mark.parametrize(("host", "port"), [("", 8000), ("172.17.0.1", 0), ("172.17.0.1", 70000)])
def test_a_proxy_route_needs_a_host_and_a_port(host, port):
    with pytest.raises(ValueError, match="proxy route"):
        ProxyRoute(host, port)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_relay_pipes_a_streamed_answer_and_each_end(tmp_path):
    upstream = socket.create_server(("127.0.0.1", 0))
    received = bytearray()

    def answer() -> None:  # reads the request to its end, then streams in chunks and closes
        conn, _ = upstream.accept()
        while chunk := conn.recv(65536):
            received.extend(chunk)
        for i in range(50):
            conn.sendall(b"data: %d\n\n" % i)
        conn.close()

    threading.Thread(target=answer, daemon=True).start()
    listen = _free_port()
    relay = subprocess.Popen(
        [sys.executable, "-u", relay_server.__file__, str(listen), "127.0.0.1", str(upstream.getsockname()[1])],
        stdout=subprocess.PIPE,
    )
    try:
        assert relay.stdout is not None and relay.stdout.readline() == b"ready\n"
        client = socket.create_connection(("127.0.0.1", listen), timeout=10)
        client.sendall(b"x" * 200_000)
        client.shutdown(socket.SHUT_WR)  # the end of the request reaches the proxy
        streamed = bytearray()
        while chunk := client.recv(65536):
            streamed.extend(chunk)
        client.close()
    finally:
        relay.kill()
        relay.wait()
        upstream.close()
    assert received == b"x" * 200_000
    assert streamed == b"".join(b"data: %d\n\n" % i for i in range(50))
