"""evalkit's collector in a scoring sandbox: started as root before the hidden tests
(`collector_server.py`), read after them. What it holds left the test process as the guard made
it; the sandbox user can neither write it nor rewrite it afterwards."""

from __future__ import annotations

import json
import secrets
import shlex
import time
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


def start_collector(sandbox: Sandbox) -> Collector | None:
    """The collector, listening; None when the sandbox cannot start a root process (the guard's
    report file is read instead) or the collector did not come up (python3 missing as root)."""
    if not isinstance(sandbox, PrivilegedStart):
        return None
    collector = Collector(f"/tmp/evalkit-collector-{secrets.token_hex(8)}")
    sandbox.start_privileged(["python3", "-c", COLLECTOR_SOURCE, collector.folder])
    ready = shlex.quote(f"{collector.folder}/ready")
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        if sandbox.exec(f"test -e {ready}", timeout=30).ok:
            return collector
        time.sleep(0.02)
    return None


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
