"""Faults of an agent evalkit did not write (`--agent command:...`), contained: an agent that
hangs, floods its output, leaves daemons behind, crashes before or after calling its model, or
meets a hostile endpoint through the proxy ends with the stop reason that says so, its error
recorded, and leaves no container or network; Ctrl-C stops such a run cleanly and its resume
finishes it without a duplicated row. One misbehaving agent (tests/data/fault_agent.py) does what
its model's name says; every model is a scenario of tests/hostile_server.py."""

import json
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from agent_runs import agent_log, assert_nothing_left, rows_of
from conftest import EVALKIT, run_evalkit
from hostile_server import HostileServer, models_config, turn
from processes import interruptible
from toy import BASE_FILES, POWER

pytestmark = pytest.mark.integration

AGENT_SOURCE = (Path(__file__).parent.parent / "data" / "fault_agent.py").read_text()
SOLUTION = BASE_FILES["calc/__init__.py"] + POWER
FAULT_AGENT = f"command:SOLUTION={shlex.quote(SOLUTION)} python3 -c {shlex.quote(AGENT_SOURCE)}"
DONE = [[turn(content="Nothing to do.")]]
MISBEHAVIOURS = ("hang", "flood", "fork", "crash_early", "crash_late", "spam")
GIT_BREAKERS = ("git_lock", "git_gone", "git_readonly")
HOSTILE = {
    "garbage": [[{"status": 200, "body": {"choices": "not a list", "usage": 7}}]],
    "broken": [[{"status": 500}]],
    "drip": [[{"trickle": True}]],
    "huge": [[{"flood": 40_000_000}]],
}
# evalkit's own tool loop, whose model leaves a daemon writing into the sandbox's shell
LOOP_DAEMON = [
    [turn(("bash", {"command": "(while :; do echo junk-from-a-daemon; sleep 0.002; done) &"}))],
    [turn(("write_file", {"path": "calc/__init__.py", "content": SOLUTION}))],
    [turn(("submit", {"summary": "Added power() to calc/__init__.py."}))],
]
SCENARIOS = {**{name: DONE for name in (*MISBEHAVIOURS, *GIT_BREAKERS, "slow")}, **HOSTILE, "loop_daemon": LOOP_DAEMON}
WALL_TIME_S = 20


def models_args(*names: str) -> list[str]:
    return [part for name in names for part in ("--model", name)]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The models, each a scenario of one hostile server, in an evalkit.toml."""
    out = tmp_path_factory.mktemp("agent-faults")
    with HostileServer(SCENARIOS, models=["hostile"]) as server:
        config = out / "evalkit.toml"
        config.write_text(models_config(server, SCENARIOS))
        yield out, config


@pytest.fixture(scope="module")
def fault_run(toy_suite_dir, docker_engine, hostile):
    """Every misbehaviour and every hostile endpoint, one attempt each, in one run; the peak
    memory of the evalkit process is measured by a parent that waits for it alone."""
    out, config = hostile
    measure = "import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); " \
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(code)"  # fmt: skip
    args = ["run", "--suite", toy_suite_dir, *models_args(*MISBEHAVIOURS, *GIT_BREAKERS, *HOSTILE), "--config", config,
            "--agent", FAULT_AGENT, "--run-id", "faults", "--out", out, "--concurrency", "3",
            "--wall-time", str(WALL_TIME_S), "--max-turns", "1"]  # fmt: skip
    result = subprocess.run([sys.executable, "-c", measure, EVALKIT, *map(str, args)], capture_output=True,
                            text=True, timeout=900)  # fmt: skip
    peak_kb = int(result.stdout.strip().splitlines()[-1])
    rows = {row["model"]: row for row in rows_of(out / "faults")}
    return result, rows, out / "faults", peak_kb


def test_every_fault_ends_with_its_own_stop_reason(fault_run, docker_engine):
    result, rows, _, _ = fault_run
    assert result.returncode == 3, result.stderr[-3000:]  # finished; the hostile endpoints' attempts errored
    stops = {model: row["stop_reason"] for model, row in rows.items()}
    assert stops == {
        "hang": "wall_time",
        "flood": "submitted",
        "fork": "submitted",
        "crash_early": "agent_error",
        "crash_late": "agent_error",
        "spam": "max_turns",
        **{name: "submitted" for name in GIT_BREAKERS},
        **{name: "endpoint_error" for name in HOSTILE},
    }
    assert_nothing_left(docker_engine, "faults")


def test_a_hung_agent_is_stopped_at_the_wall_time(fault_run):
    _, rows, run_dir, _ = fault_run
    hang = rows["hang"]
    assert hang["turns"] == 0 and WALL_TIME_S <= hang["agent_s"] < WALL_TIME_S + 30
    assert "killed at the attempt's wall time" in agent_log(run_dir, hang)


def test_an_agent_spamming_its_model_past_its_budget_does_not_flood_the_trajectory(fault_run):
    """Its first request is the one turn it had; each later one, a new 1 MB conversation, is refused
    and counted, not written out (over 20 s, gigabytes)."""
    _, rows, run_dir, _ = fault_run
    spam = rows["spam"]
    assert spam["turns"] == 1 and "killed at the attempt's wall time" in agent_log(run_dir, spam)  # it kept going
    trajectory = run_dir / spam["trajectory"]
    assert trajectory.stat().st_size < 2_000_000
    events = [json.loads(line) for line in trajectory.read_text().splitlines()]
    refused = [e for e in events if e["type"] == "proxy_refused"]
    assert refused and refused[-1]["refused"] > 10  # how many were refused, in the last such event


def test_a_flood_is_cut_to_its_head_and_tail_and_the_attempt_still_scored(fault_run):
    _, rows, run_dir, peak_kb = fault_run
    flood = rows["flood"]
    assert flood["resolved"] and flood["error"] is None
    log = agent_log(run_dir, flood)
    assert "(output cut: head and tail kept)" in log and "evalkit truncated" in log and len(log) < 1_000_000
    assert peak_kb < 400 * 1024  # evalkit alone: ~270 MB; 300 MB went through the agent's output, never held


def test_daemons_of_an_agent_do_not_reach_its_diff(fault_run):
    _, rows, run_dir, _ = fault_run
    fork = rows["fork"]
    assert fork["error"] is None and fork["resolved"]
    assert "junk-from-a-daemon" not in fork["model_patch"] and "late.txt" not in fork["model_patch"]
    assert fork["agent_s"] < WALL_TIME_S  # the daemons holding the shell's output did not keep it waiting


def test_daemons_of_the_tool_loops_model_do_not_reach_its_diff(toy_suite_dir, docker_engine, hostile):
    out, config = hostile
    result = run_evalkit("run", "--suite", toy_suite_dir, "--model", "loop_daemon", "--config", config,
                         "--run-id", "loop-daemon", "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (row,) = rows_of(out / "loop-daemon")
    assert row["stop_reason"] == "submitted" and row["error"] is None and row["resolved"]
    assert "junk-from-a-daemon" not in row["model_patch"]
    assert_nothing_left(docker_engine, "loop-daemon")


def test_an_agent_that_breaks_its_workspaces_git_still_gets_its_diff_scored(fault_run):
    """Not a `sandbox_error` (the harness's failure: never scored, run again by every resume): the
    diff is taken from evalkit's own copy of the base repository instead."""
    _, rows, _, _ = fault_run
    for name in GIT_BREAKERS:
        row = rows[name]
        assert row["error"] is None and row["resolved"], (name, row["error"])
        assert row["model_patch"].startswith("diff --git a/calc/__init__.py") and ".git/" not in row["model_patch"]


def test_an_agent_that_crashes_is_told_apart_from_one_that_finished(fault_run):
    _, rows, run_dir, _ = fault_run
    early, late = rows["crash_early"], rows["crash_late"]
    assert early["error"] == "the agent command exited with code 3: fatal: no provider configured"
    assert early["turns"] == 0 and not early["resolved"]
    assert late["error"] == "the agent command exited with code 4: KeyError: 'tool_calls'" and late["turns"] == 1
    assert "--- stdout ---\nreply: Nothing to do." in agent_log(run_dir, late)
    entries = {e["model"]: e for e in json.loads((run_dir / "summary.json").read_text())["models"]}
    assert entries["crash_early"]["stop_reasons"] == {"agent_error": 1} and entries["crash_early"]["errors"] == 0


def test_a_hostile_endpoint_through_the_agent_is_recorded_as_the_channel_saw_it(fault_run):
    _, rows, run_dir, _ = fault_run
    for name in HOSTILE:
        row = rows[name]
        assert row["error"] and row["turns"] == 0, (name, row["error"])
        events = [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]
        assert any(e["type"] == "proxy_end" and e["stop_reason"] == "endpoint_error" for e in events), name
        assert "model error 502" in agent_log(run_dir, row)  # the agent was told, and stopped
    assert set(rows["broken"]["retries"]) == {"server_error"} and set(rows["drip"]["retries"]) == {"timeout"}
    assert set(rows["huge"]["retries"]) == set(rows["garbage"]["retries"]) == {"bad_response"}


def test_ctrl_c_leaves_nothing_and_the_resume_finishes_without_duplicates(toy_suite_dir, docker_engine, hostile):
    out, config = hostile
    args = ["run", "--suite", toy_suite_dir, "--model", "slow", "--samples", "3", "--config", config,
            "--agent", FAULT_AGENT, "--run-id", "halted", "--out", out, "--concurrency", "1"]  # fmt: skip
    proc = interruptible([EVALKIT, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 180
    while not rows_of(out / "halted") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(1.5)  # the next attempt's agent is at work
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert "Traceback" not in stderr and "resume with: evalkit run --run-id halted" in stderr
    assert_nothing_left(docker_engine, "halted")
    kept = rows_of(out / "halted")
    assert 1 <= len(kept) < 3

    resumed = run_evalkit("run", "--run-id", "halted", "--out", out)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    rows = rows_of(out / "halted")
    assert rows[: len(kept)] == kept and sorted(r["sample"] for r in rows) == [0, 1, 2]  # none twice
    assert all(r["resolved"] and r["stop_reason"] == "submitted" for r in rows)
    assert_nothing_left(docker_engine, "halted")


def listening_sockets() -> set[int]:
    """The inodes of this process's TCP sockets in LISTEN state."""
    mine = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = fd.readlink().name
        except OSError:
            continue
        if target.startswith("socket:["):
            mine.add(int(target[8:-1]))
    listening = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A":  # LISTEN
                listening.add(int(fields[9]))
    return mine & listening


def test_the_run_proxy_leaves_no_port_and_no_thread_in_the_process(docker_engine, toy_task, tmp_path):
    """In-process (a `evalkit run` that exits would free both anyway): two attempts through the
    proxy, one to an endpoint that drips its answer, one to an agent that hangs; once the run's
    proxy and backend are closed nothing of them listens, runs or is left on the engine."""
    from evalkit.agent.agent_table import command_name, command_template
    from evalkit.agent.command_agent import CommandAgent
    from evalkit.bridge.run_proxy import RunProxy
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import ModelSpec
    from evalkit.sandbox.docker.backend import DockerBackend
    from evalkit.trajectory import TrajectoryWriter

    threads_before, sockets_before = {t.ident for t in threading.enumerate()}, listening_sockets()
    limits = toy_task.limits.model_copy(update={"wall_time_s": 8})
    with HostileServer({"drip": HOSTILE["drip"]}) as server:
        spec = ModelSpec(name="drip", model="hostile", base_url=server.url("drip"), request_timeout_s=2, max_retries=0)
        client = ChatClient(spec)
        backend = DockerBackend(docker_engine, run_id="faults-inproc")
        try:
            with RunProxy(backend) as proxy:
                proxy.start()
                for name, template in (("drip", FAULT_AGENT), ("hang", "command:sleep 600")):
                    command = command_template(template)
                    agent = CommandAgent(command, client, proxy, 65536, command_name(command))
                    sandbox = backend.open(toy_task, role="agent", egress="proxy")
                    try:
                        with TrajectoryWriter(tmp_path / f"{name}.jsonl") as trajectory:
                            deadline = time.monotonic() + limits.wall_time_s
                            outcome = agent.run(toy_task.prompt, sandbox, limits, trajectory, deadline)
                    finally:
                        sandbox.close()
                    assert outcome.stop_reason == ("endpoint_error" if name == "drip" else "wall_time"), outcome
        finally:
            backend.close()
            client.close()
    deadline = time.monotonic() + 15  # a handler thread ends once its connection does
    while {t.ident for t in threading.enumerate()} - threads_before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [t.name for t in threading.enumerate() if t.ident not in threads_before] == []
    assert listening_sockets() == sockets_before
    assert_nothing_left(docker_engine, "faults-inproc")
