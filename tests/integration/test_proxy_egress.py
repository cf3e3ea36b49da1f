"""An agent sandbox opened with `egress="proxy"` reaches the run's model proxy and nothing else:
not the host's other services, not another container of the run, not the internet (address or
name). The same probes run in a sandbox with the full network first (`egress="full"`, today's
`network=True`), where the host and the other container answer: the probes can tell.

The stand-in proxy is a tiny HTTP server on the host, bound to the default bridge's gateway (where
the real proxy listens); a second server on all the host's addresses stands for its other services."""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import threading

import pytest

from evalkit.sandbox.docker.backend import DockerBackend
from evalkit.sandbox.docker.containers import (
    LABEL_OWNER,
    LABEL_OWNER_START,
    LABEL_RUN,
    container_labels,
    owner_label,
    process_start,
    prune,
)
from evalkit.sandbox.docker.proxy_net import host_gateway
from evalkit.sandbox.egress import ProxyRoute

pytestmark = pytest.mark.integration

PROBE = r"""
import json, socket, sys, urllib.request
out = {}
for name, host, port in json.loads(sys.argv[1]):
    try:
        socket.create_connection((host, port), timeout=3).close()
        out[name] = "open"
    except OSError as exc:
        out[name] = f"closed: {exc}"
try:
    out["proxy"] = urllib.request.urlopen(sys.argv[2] + "/v1/models", timeout=5).read().decode()
except Exception as exc:
    out["proxy"] = f"failed: {exc}"
print(json.dumps(out))
"""


class _Answer(http.server.BaseHTTPRequestHandler):
    body = b"{}"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


def _serve(host: str, body: bytes) -> http.server.ThreadingHTTPServer:
    handler = type("Handler", (_Answer,), {"body": body})
    server = http.server.ThreadingHTTPServer((host, 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def gateway(docker_engine):
    return host_gateway(docker_engine)


@pytest.fixture(scope="module")
def stand_in_proxy(gateway):
    server = _serve(gateway, b'{"object": "list", "data": [{"id": "stand-in"}]}')
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def host_service():
    server = _serve("0.0.0.0", b"host service")  # every address of the host: the bridge's, the internal one's
    yield server
    server.shutdown()


@pytest.fixture(scope="module")
def run_backend(docker_engine, stand_in_proxy, gateway):
    backend = DockerBackend(docker_engine, run_id="pytest-egress-" + socket.gethostname()[:6])
    backend.proxy = ProxyRoute(gateway, stand_in_proxy.server_address[1])
    yield backend
    backend.close()


@pytest.fixture(scope="module")
def neighbour(run_backend, toy_task):
    """Another container of the same run, serving on port 9000 as the agent user."""
    box = run_backend.open(toy_task, role="agent", network=True)
    box.exec("nohup python3 -m http.server 9000 >/dev/null 2>&1 &")
    box.exec("for i in $(seq 50); do python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", 9000))' "
             "2>/dev/null && break; sleep 0.1; done")
    yield box
    box.close()


def _addresses(client, container_id: str) -> list[str]:
    networks = client.api.inspect_container(container_id)["NetworkSettings"]["Networks"]
    return [n["IPAddress"] for n in networks.values() if n.get("IPAddress")]


def _probe(box, targets: list[tuple[str, str, int]], proxy_url: str) -> dict[str, str]:
    result = box.exec(f"python3 -c {_quote(PROBE)} {_quote(json.dumps(targets))} {_quote(proxy_url)}", timeout=60)
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def _targets(client, box, gateway: str, service_port: int, neighbour) -> list[tuple[str, str, int]]:
    internal_gateways = []
    for network in client.api.inspect_container(box.container_id)["NetworkSettings"]["Networks"].values():
        if network.get("Gateway"):
            internal_gateways.append(network["Gateway"])
    targets = [("host service on the bridge gateway", gateway, service_port)]
    targets += [(f"host service on gateway {g}", g, service_port) for g in internal_gateways if g != gateway]
    targets += [(f"neighbour {a}", a, 9000) for a in _addresses(client, neighbour.container_id)]
    targets += [("public address", "1.1.1.1", 443), ("public name", "pypi.org", 443)]
    return targets


def test_with_the_full_network_the_probes_reach_the_host_and_the_neighbour(
    run_backend, toy_task, gateway, host_service, neighbour, docker_engine
):
    with run_backend.open(toy_task, role="agent", network=True) as box:  # as old callers ask for it
        reached = _probe(box, _targets(docker_engine, box, gateway, host_service.server_address[1], neighbour), "")
    assert reached["host service on the bridge gateway"] == "open"
    assert any(v == "open" for k, v in reached.items() if k.startswith("neighbour")), reached


def test_through_the_proxy_only_the_proxy_answers(run_backend, toy_task, gateway, host_service, neighbour,
                                                 docker_engine):
    with run_backend.open(toy_task, role="agent", egress="proxy") as box:
        assert box.proxy_url is not None
        reached = _probe(box, _targets(docker_engine, box, gateway, host_service.server_address[1], neighbour),
                         box.proxy_url)
        dns = box.exec("getent hosts pypi.org || echo unresolved").stdout.strip()
        ipv6 = box.exec("cat /proc/net/if_inet6").stdout.strip()
    assert json.loads(reached.pop("proxy"))["data"][0]["id"] == "stand-in"
    assert all(v.startswith("closed") for v in reached.values()), reached
    assert dns == "unresolved"
    assert ipv6 == ""  # no IPv6 either: the host's side of the bridge keeps a link-local fe80:: address


def test_two_proxied_sandboxes_cannot_reach_each_other(run_backend, toy_task, docker_engine):
    with run_backend.open(toy_task, role="agent", egress="proxy") as one, \
            run_backend.open(toy_task, role="agent", egress="proxy") as other:
        other.exec("nohup python3 -m http.server 9000 >/dev/null 2>&1 &")
        targets = [(f"other {a}", a, 9000) for a in _addresses(docker_engine, other.container_id)]
        assert targets
        reached = _probe(one, targets, one.proxy_url or "")
        assert json.loads(reached.pop("proxy"))["data"]
        assert all(v.startswith("closed") for v in reached.values()), reached


def test_after_close_nothing_of_the_run_is_left(docker_engine, toy_task, stand_in_proxy, gateway):
    backend = DockerBackend(docker_engine, run_id="pytest-egress-close-" + socket.gethostname()[:6])
    backend.proxy = ProxyRoute(gateway, stand_in_proxy.server_address[1])
    closed = backend.open(toy_task, role="agent", egress="proxy")
    closed.close()
    backend.open(toy_task, role="agent", egress="proxy")  # left open: the backend's close removes it
    backend.close()
    label = {"label": f"{LABEL_RUN}={backend.run_id}"}
    assert docker_engine.api.containers(all=True, filters=label) == []
    assert docker_engine.api.networks(filters=label) == []


def test_the_sweep_removes_the_networks_of_dead_runs_and_keeps_live_ones(docker_engine):
    run_id = f"pytest-egress-sweep-{socket.gethostname()[:6]}"
    child = subprocess.Popen(["sleep", "0.1"])
    dead_owner = {LABEL_OWNER: owner_label(child.pid), LABEL_OWNER_START: process_start(child.pid) or ""}
    child.wait()
    live = container_labels(run_id, "t", "egress-net")
    made = [docker_engine.networks.create(f"{run_id}-{i}", internal=True, labels=labels)
            for i, labels in enumerate((live, {**live, **dead_owner}))]
    try:
        assert prune(docker_engine, run_id).networks == 1
        (left,) = docker_engine.api.networks(filters={"label": f"{LABEL_RUN}={run_id}"})
        assert left["Id"] == made[0].id
        assert prune(docker_engine, run_id, live_too=True).networks == 1
        assert docker_engine.api.networks(filters={"label": f"{LABEL_RUN}={run_id}"}) == []
    finally:
        for network in made:
            with contextlib.suppress(Exception):
                network.remove()


FLOOD = r"""
import socket, sys, urllib.request
held = []
for _ in range(300):
    try:
        held.append(socket.create_connection(("evalkit-proxy", 8080), timeout=3))
    except OSError:
        pass
for held_one in held:
    held_one.close()
print(urllib.request.urlopen(sys.argv[1] + "/v1/models", timeout=10).read().decode())
"""


def test_an_agent_flooding_the_relay_with_connections_does_not_end_it(run_backend, toy_task):
    with run_backend.open(toy_task, role="agent", egress="proxy") as box:
        result = box.exec(f"python3 -c {_quote(FLOOD)} {_quote(box.proxy_url or '')}", timeout=120)
    assert result.exit_code == 0, result.stderr[-500:]
    assert json.loads(result.stdout)["data"][0]["id"] == "stand-in"
