"""What an open sandbox may reach (its egress), as a typed choice: `none` (loopback only: scoring
always, and agents unless a task asks), `proxy` (one endpoint, the run's model proxy, through a
relay on a network of its own) or `full` (the engine's default bridge: what `network=True` meant).
Pure: the Docker side is in proxy_net.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Egress = Literal["none", "proxy", "full"]
EGRESS_KINDS: tuple[str, ...] = get_args(Egress)
PROXY_ALIAS = "evalkit-proxy"  # the relay's name on a proxied sandbox's network
RELAY_PORT = 8080  # where the relay listens: the same URL in every attempt, above the privileged ports
PROXY_URL = f"http://{PROXY_ALIAS}:{RELAY_PORT}"  # the proxy's origin as an agent in a proxied sandbox calls it


def resolve_egress(network: bool, egress: str | None) -> Egress:
    """The egress asked for: `egress` when given, else what the older `network` flag meant.
    `network=True` beside another egress contradicts itself: a ValueError rather than a guess."""
    if egress is None:
        return "full" if network else "none"
    if egress not in EGRESS_KINDS:
        raise ValueError(f"egress must be one of {', '.join(EGRESS_KINDS)}, not {egress!r}")
    if network and egress != "full":
        raise ValueError(f"network=True means egress 'full', not {egress!r}: give only one of them")
    return egress  # type: ignore[return-value]  # checked against EGRESS_KINDS above


@dataclass(frozen=True)
class ProxyRoute:
    """Where a proxied sandbox's relay forwards: the host address and port the run's proxy listens
    on (the default bridge's gateway, reachable from containers on that bridge)."""

    host: str
    port: int

    def __post_init__(self) -> None:
        if not self.host or not 0 < self.port < 65536:
            raise ValueError(f"a proxy route needs a host and a port in 1-65535, not {self.host!r}:{self.port}")
