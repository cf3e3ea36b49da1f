"""A hostile model endpoint through each real installed agent (every installed row of AGENTS, so a
new agent is covered by adding it): a server that keeps failing, one that answers garbage, one
whose body never ends, one that never answers and one that answers 40 MB. Each attempt ends with
the stop reason and error that say what the endpoint did (never `submitted` with no error), the
trajectory holds the proxy's failure, the agent was told and stopped (its own log kept), and
nothing of the run is left. Then Ctrl-C in the middle of a real agent's attempt: a clean exit,
nothing left, and the resume finishes the run without a duplicated row.

Uses the agents' images as test_installed_mswea builds them (the first run of an agent builds its
layer, about 2 minutes)."""

import signal
import subprocess
import time

import pytest
from agent_runs import agent_log, assert_nothing_left, events_of, installed_agents, rows_of
from conftest import DEMO_SUITE, EVALKIT, run_evalkit
from hostile_server import HostileServer
from processes import interruptible

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

INSTALLED = installed_agents()
TASK = "kvstore-batch"
WALL_TIME_S = 90  # an installed agent takes 10-40 s to start on 2 busy cores
# scenario → (its script, the stop reason, what the error says, the retries the proxy's client made)
HOSTILE = {
    "broken": ([[{"status": 500}]], "endpoint_error", "HTTP 500", {"server_error"}),
    "garbage": ([[{"status": 200, "body": {"choices": "not a list", "usage": 7}}]], "endpoint_error",
                "no usable message", {"bad_response"}),
    "drip": ([[{"trickle": True}]], "endpoint_error", "no answer within", {"timeout"}),
    "huge": ([[{"flood": 40_000_000}]], "endpoint_error", "bad_response", {"bad_response"}),
    "silent": ([[{"hang": 3600}]], "wall_time", "time ran out", {"timeout"}),
}  # fmt: skip


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """Each scenario of one hostile server as a model of an evalkit.toml; `silent` may wait longer
    than the attempt has, so the attempt's wall time is what ends it."""
    out = tmp_path_factory.mktemp("installed-faults")
    with HostileServer({name: script for name, (script, *_) in HOSTILE.items()}, models=["hostile"]) as server:
        config = out / "evalkit.toml"
        config.write_text("".join(
            f'[models.{name}]\nmodel = "hostile"\nbase_url = "{server.url(name)}"\n'
            f"request_timeout_s = {3600 if name == 'silent' else 2}\nmax_retries = 1\nretry_base_s = 0.05\n"
            for name in HOSTILE
        ))  # fmt: skip
        yield out, config, server


@pytest.fixture(scope="module", params=INSTALLED)
def hostile_run(request, hostile, docker_engine):
    """Every hostile endpoint through one installed agent, one attempt each, in one run."""
    out, config, _ = hostile
    agent = request.param
    run_id = f"hostile-{agent}"
    models = [part for name in HOSTILE for part in ("--model", name)]
    started = time.monotonic()
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--task", TASK, *models, "--config", config, "--agent", agent,
                         "--run-id", run_id, "--out", out, "--concurrency", "3", "--wall-time", WALL_TIME_S,
                         timeout=900)  # fmt: skip
    rows = {row["model"]: row for row in rows_of(out / run_id)}
    summary = {m: (r["stop_reason"], r["turns"], r["agent_s"], r["error"]) for m, r in rows.items()}
    print(f"\n{run_id}: {time.monotonic() - started:.0f} s: {summary}")
    return agent, result, rows, out / run_id


def test_every_hostile_endpoint_ends_the_attempt_with_what_happened(hostile_run, docker_engine):
    agent, result, rows, run_dir = hostile_run
    assert result.returncode == 3, result.stderr[-3000:]  # the run finished; its attempts errored
    assert sorted(rows) == sorted(HOSTILE)
    for name, (_, stop, says, retries) in HOSTILE.items():
        row = rows[name]
        assert (row["agent"], row["stop_reason"], row["turns"]) == (agent, stop, 0), (name, row["error"])
        assert row["error"] and says in row["error"], (name, row["error"])
        assert set(row["retries"]) == retries, (name, row["retries"])
        assert not row["resolved"] and row["model_patch"] == ""
    assert_nothing_left(docker_engine, f"hostile-{agent}")


def test_the_trajectory_records_the_proxys_failure_and_the_agent_stopped_when_told(hostile_run):
    """The agent got the proxy's error and ended on it: the 502, or the 400 that answers a retry of
    it (no retry loop against a finished attempt), seconds after it was told (its start-up under
    load is what takes long), unless the wall time is what ended it."""
    _, _, rows, run_dir = hostile_run
    for name, (_, stop, says, _) in HOSTILE.items():
        row = rows[name]
        events = events_of(run_dir, row)
        failed = [e for e in events if e["type"] == "model_call"]
        assert len(failed) == 1 and failed[0]["failed"] and says in failed[0]["error"], (name, failed)
        assert [(e["stop_reason"], e["error"]) for e in events if e["type"] == "proxy_end"] == [(stop, row["error"])]
        refused = [e["refused"] for e in events if e["type"] == "proxy_refused"]
        log = agent_log(run_dir, row)
        if stop == "endpoint_error":
            assert refused in ([1], [1, 2]), (name, refused, log[-2000:])
            assert "the model endpoint failed" in log, (name, log[-2000:])
            told = next(e["t"] for e in events if e["type"] == "proxy_refused")
            ended = next(e["t"] for e in events if e["type"] == "agent_exit")
            assert ended - told < 30, (name, told, ended)  # not on until the wall time
        else:  # told its time was up, or killed at the deadline while it waited
            assert "wall_time budget is spent" in log or "killed at the attempt's wall time" in log, log[-2000:]
        assert [e for e in events if e["type"] == "stop"][-1]["stop_reason"] == stop


@pytest.mark.parametrize("agent", INSTALLED)
def test_ctrl_c_in_a_real_agents_attempt_leaves_nothing_and_the_resume_has_no_duplicates(
    agent, docker_engine, tmp_path
):
    run_id = f"halted-{agent}"
    args = ["run", "--suite", DEMO_SUITE, "--task", TASK, "--model", "oracle", "--samples", "3", "--agent", agent,
            "--run-id", run_id, "--out", tmp_path, "--concurrency", "1"]  # fmt: skip
    proc = interruptible([EVALKIT, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    while not rows_of(tmp_path / run_id) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    time.sleep(6)  # the next attempt's agent is starting or at work
    assert proc.poll() is None, proc.communicate()[1][-3000:]
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and f"resume with: evalkit run --run-id {run_id}" in stderr
    assert_nothing_left(docker_engine, run_id)
    kept = rows_of(tmp_path / run_id)
    assert 1 <= len(kept) < 3

    resumed = run_evalkit("run", "--run-id", run_id, "--out", tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = rows_of(tmp_path / run_id)
    assert rows[: len(kept)] == kept and sorted(r["sample"] for r in rows) == [0, 1, 2]  # none twice
    assert all(r["resolved"] and r["stop_reason"] == "submitted" and r["agent"] == agent for r in rows)
    assert_nothing_left(docker_engine, run_id)
