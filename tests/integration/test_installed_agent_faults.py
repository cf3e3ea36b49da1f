"""A hostile model endpoint reached through each installed agent (`--agent mini-swe-agent`, ...):
garbage JSON, 500s, an endless dripping body and a 40 MB body end every attempt as the proxy's
channel saw it (`endpoint_error`, its error and retries recorded, a `proxy_end` event), the run
finishes, and no container or network of it is left. The agents' images are built by their own
tests first (tests/integration/test_installed_*.py); here they are reused when already built."""

import json

import pytest
from conftest import run_evalkit
from hostile_server import HostileServer, models_config

from evalkit.agent.registry import AGENTS, DEFAULT_AGENT
from evalkit.sandbox.containers import LABEL_RUN

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]  # an agent image not yet built is built

INSTALLED = sorted(name for name in AGENTS if name != DEFAULT_AGENT)
HOSTILE = {
    "garbage": [[{"status": 200, "body": {"choices": "not a list", "usage": 7}}]],
    "broken": [[{"status": 500}]],
    "drip": [[{"trickle": True}]],
    "huge": [[{"flood": 40_000_000}]],
}


@pytest.mark.parametrize("agent", INSTALLED)
def test_a_hostile_endpoint_through_an_installed_agent_is_recorded_and_leaves_nothing(
    agent, toy_suite_dir, docker_engine, tmp_path
):
    with HostileServer(HOSTILE, models=["hostile"]) as server:
        config = tmp_path / "evalkit.toml"
        config.write_text(models_config(server, HOSTILE))
        models = [part for name in HOSTILE for part in ("--model", name)]
        run_id = f"hostile-{agent}"
        result = run_evalkit("run", "--suite", toy_suite_dir, *models, "--config", config, "--agent", agent,
                             "--run-id", run_id, "--out", tmp_path, "--concurrency", "2", "--wall-time", "60",
                             timeout=1800)  # fmt: skip
    assert result.returncode == 3, result.stderr[-3000:]  # finished, every attempt an endpoint error
    run_dir = tmp_path / run_id
    rows = {row["model"]: row for row in map(json.loads, (run_dir / "results.jsonl").read_text().splitlines())}
    assert sorted(rows) == sorted(HOSTILE)
    for name, row in rows.items():
        assert row["stop_reason"] == "endpoint_error" and row["error"] and row["turns"] == 0, (name, row)
        assert row["agent"] == agent  # (an agent may retry the proxy's 502 until its wall time: still this)
        events = [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]
        assert [e["stop_reason"] for e in events if e["type"] == "proxy_end"] == ["endpoint_error"], name
        assert (run_dir / row["trajectory"]).with_suffix(".agent.log").exists()
    assert set(rows["broken"]["retries"]) == {"server_error"} and set(rows["drip"]["retries"]) == {"timeout"}
    label = {"label": f"{LABEL_RUN}={run_id}"}
    left = docker_engine.containers.list(all=True, ignore_removed=True, filters=label)
    assert left == [], [(c.short_id, c.status, c.image.tags, c.labels) for c in left]
    assert docker_engine.networks.list(filters=label) == []
