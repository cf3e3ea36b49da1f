"""Trajectories: one JSONL file per attempt, one event per line, flushed as it happens, so a
killed run still leaves a readable record of every attempt it started.

Event types: `start` (task, model, sampling, limits, tool schemas), `message` (every system,
user, assistant and tool message exactly as sent or received), `model_call` (latency, usage as
reported, finish reason, retries), `tool` (name, fault, exit code, sandbox time, truncation),
`stop` (stop reason), `diff`, `correctness` and `integrity` (the scan's flags and verdict).
`ReplayPolicy` reads the assistant messages back.

Written by evalkit's tool loop, or by the model proxy for an agent in a sandbox (evalkit/bridge/),
and by the attempt around either; read by the integrity scan, scoring and the report: so it sits
low, beside the attempt's other record (records.py).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import IO

from evalkit.files import read_lines


class TrajectoryWriter:
    """Appends events to `path` (replacing what an interrupted earlier try left there)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self._started = time.monotonic()

    def event(self, kind: str, **fields: object) -> None:
        record = {"type": kind, "t": round(time.monotonic() - self._started, 4), **fields}
        self._file.write(json.dumps(record, default=str) + "\n")
        self._file.flush()

    def message(self, message: dict) -> None:
        self.event("message", message=message)

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_trajectory(path: Path) -> list[dict]:
    """The events of a trajectory; a line cut short by a killed run is ignored."""
    events = []
    for line in read_lines(path):
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return events
