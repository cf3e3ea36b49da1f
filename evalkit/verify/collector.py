"""evalkit's collector in a scoring sandbox: started as root before the hidden tests
(`collector_server.py`), read after them. What it holds left the test process as the guard made
it; the sandbox user can neither write it nor rewrite it afterwards."""

from __future__ import annotations

import json
import secrets
import shlex
from dataclasses import dataclass
from pathlib import Path

from evalkit.sandbox.protocol import PrivilegedStart, Sandbox

COLLECTOR_SOURCE = (Path(__file__).parent / "collector_server.py").read_text()
READY_WITHIN_S = 15.0


@dataclass(frozen=True)
class Collector:
    """Where one run's collector listens and writes (a folder of root's, in the sandbox's /tmp)."""

    folder: str

    @property
    def socket_path(self) -> str:
        return f"{self.folder}/channel.sock"

    @property
    def evidence_path(self) -> str:
        return f"{self.folder}/evidence.jsonl"


def launch_collector(sandbox: Sandbox) -> Collector | None:
    """The collector, started (not yet known to listen: `await_collector`); None when the sandbox
    cannot start a root process (the guard's report file is read instead). Started before the
    canaries are planted, python3's start overlaps that work instead of following it."""
    if not isinstance(sandbox, PrivilegedStart):
        return None
    collector = Collector(f"/tmp/evalkit-collector-{secrets.token_hex(8)}")
    sandbox.start_privileged(["python3", "-c", COLLECTOR_SOURCE, collector.folder])
    return collector


def await_collector(sandbox: Sandbox, collector: Collector | None) -> Collector | None:
    """`collector` once it listens, waited for by one command in the sandbox (not a command per
    look); None when it did not come up within READY_WITHIN_S (python3 missing as root)."""
    if collector is None:
        return None
    ready = shlex.quote(f"{collector.folder}/ready")
    looks = int(READY_WITHIN_S / 0.01)
    waited = sandbox.exec(
        f"i=0; while [ ! -e {ready} ]; do i=$((i+1)); [ $i -gt {looks} ] && exit 1; sleep 0.01; done",
        timeout=READY_WITHIN_S + 30,
    )
    return collector if waited.ok else None


def read_evidence(sandbox: Sandbox, collector: Collector) -> list[dict]:
    """Every entry the collector wrote, in order (its own lines: always JSON)."""
    try:
        text = sandbox.read_file(collector.evidence_path)
    except FileNotFoundError:
        return []
    entries = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:  # a last line cut by the end of the run
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return entries
