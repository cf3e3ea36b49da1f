"""What a run of agents in sandboxes leaves, as the integration tests read it: its result rows, an
attempt's trajectory events and agent log, the installed agents to run every check through, and
the check that nothing of the run (container, network) is left on the engine."""

from __future__ import annotations

import json
from pathlib import Path

from evalkit.agent.installed import InstalledAgent
from evalkit.agent.registry import AGENTS
from evalkit.lazy_table import load
from evalkit.sandbox.containers import LABEL_RUN


def installed_agents() -> list[str]:
    """The names of every installed agent of the registry: a test parametrized over them covers the
    next agent once its row is added."""
    return [name for name in AGENTS if isinstance(load(AGENTS, name, "agent"), InstalledAgent)]


def rows_of(run_dir: Path) -> list[dict]:
    """The run's result rows ([] before the first attempt ends)."""
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def events_of(run_dir: Path, row: dict) -> list[dict]:
    return [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]


def agent_log(run_dir: Path, row: dict) -> str:
    """The agent's own output, kept beside the attempt's trajectory."""
    return (run_dir / row["trajectory"]).with_suffix(".agent.log").read_text()


def assert_nothing_left(client, run_id: str) -> None:
    label = {"label": f"{LABEL_RUN}={run_id}"}
    assert client.containers.list(all=True, ignore_removed=True, filters=label) == []
    assert client.networks.list(filters=label) == []
