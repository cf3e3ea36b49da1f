"""The network of a proxied sandbox (`egress="proxy"`): a Docker network of its own, internal (no
route out) and with no address on the host's side (`inhibit_ipv4`: an internal bridge otherwise
holds a gateway address through which every host service answers), holding the agent's container
and a relay. The relay, also on the default bridge, pipes one port to the run's model proxy on the
host (relay_server.py); the agent calls it as `PROXY_URL`. One network per sandbox, so no two
agents ever share a link. Network and relay carry evalkit's labels: removed with the sandbox, on
Ctrl-C (`LiveContainers`) and by the sweep of dead runs."""

from __future__ import annotations

import ipaddress
import secrets
import time
from pathlib import Path

import docker
import docker.errors

from evalkit.errors import SandboxError
from evalkit.sandbox.docker.containers import LiveContainers, container_labels, remove_container, remove_network
from evalkit.sandbox.egress import PROXY_ALIAS, RELAY_PORT, ProxyRoute

RELAY_SOURCE = (Path(__file__).parent.parent / "relay_server.py").read_text()  # engine-neutral, in evalkit/sandbox/
RELAY_USER = "65534:65534"  # nobody: the relay needs no file and no privilege
RELAY_READY_S = 20.0
NETWORK_ROLE = "egress-net"
RELAY_ROLE = "egress-relay"


def host_gateway(client: docker.DockerClient) -> str:
    """The host's address on the default bridge (docker0), where the run's proxy listens so that
    containers reach it and nothing outside the host does."""
    try:
        config = client.api.inspect_network("bridge").get("IPAM", {}).get("Config") or []
    except docker.errors.NotFound:
        raise SandboxError(
            "the Docker engine has no default bridge network (dockerd --bridge=none?): an agent in a sandbox "
            "reaches the run's model proxy through it; start the engine with its bridge"
        ) from None
    return bridge_gateway(config)


def bridge_gateway(config: list[dict]) -> str:
    """The IPv4 gateway of a bridge's IPAM `Config` entries. An engine that made docker0 itself
    (its first start) reports the subnet alone: its bridge driver took the subnet's first host
    address, as it always does when no gateway is given."""
    for entry in config:
        subnet = ipaddress.ip_network(entry.get("Subnet") or "::/128", strict=False)
        if subnet.version != 4:
            continue
        gateway = entry.get("Gateway") or str(next(subnet.hosts(), ""))
        if gateway:
            return gateway
    raise SandboxError("the Docker engine's default bridge has no IPv4 address: a proxied sandbox cannot reach it")


class ProxyNet:
    """One sandbox's own network and the relay on it; `remove()` takes both away (safe twice)."""

    def __init__(
        self, client: docker.DockerClient, image: str, route: ProxyRoute, *, run_id: str, task_id: str,
        live: LiveContainers | None,
    ) -> None:
        self._client = client
        self._live = live
        self.relay_id: str | None = None
        self.name = f"evalkit-{secrets.token_hex(6)}"
        network = client.networks.create(
            self.name,
            driver="bridge",
            internal=True,
            options={"com.docker.network.bridge.inhibit_ipv4": "true"},
            labels=container_labels(run_id, task_id, NETWORK_ROLE),
            check_duplicate=True,
        )
        self.network_id: str = network.id
        if live is not None:
            live.add_network(self.network_id)
        try:
            self._start_relay(image, route, run_id, task_id)
        except BaseException:
            self.remove()
            raise

    def _start_relay(self, image: str, route: ProxyRoute, run_id: str, task_id: str) -> None:
        relay = self._client.containers.create(
            image,
            command=["python3", "-u", "-c", RELAY_SOURCE, str(RELAY_PORT), route.host, str(route.port)],
            user=RELAY_USER,
            init=True,
            detach=True,
            labels=container_labels(run_id, task_id, RELAY_ROLE),
            network="bridge",
            mem_limit="64m",
            memswap_limit="64m",
            nano_cpus=int(0.5e9),
            pids_limit=64,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            read_only=True,
        )
        self.relay_id = relay.id
        if self._live is not None:
            self._live.add(relay.id)
        self._client.api.connect_container_to_network(relay.id, self.network_id, aliases=[PROXY_ALIAS])
        relay.start()
        self._wait_ready()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + RELAY_READY_S
        while time.monotonic() < deadline:
            state = self._client.api.inspect_container(self.relay_id)["State"]
            if b"ready" in self._client.api.logs(self.relay_id, stdout=True, stderr=False):
                return
            if not state["Running"]:
                detail = self._client.api.logs(self.relay_id).decode(errors="replace").strip()[-200:]
                raise SandboxError(f"the proxy relay exited: {detail or 'no output'}")
            time.sleep(0.05)
        raise SandboxError(f"the proxy relay did not start within {RELAY_READY_S:.0f} s")

    def remove(self) -> None:
        """The relay, then the network (which holds no endpoint once its containers are gone)."""
        if self.relay_id is not None:
            remove_container(self._client, self.relay_id)
            if self._live is not None:
                self._live.discard(self.relay_id)
        remove_network(self._client, self.network_id)
        if self._live is not None:
            self._live.discard_network(self.network_id)
