"""The in-container command server is plain Python: these tests run it on the host."""

import json
import os
import subprocess
import sys
import time

import pytest

from evalkit.sandbox.command_channel import SERVER_SOURCE


@pytest.fixture
def server(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-u", "-c", SERVER_SOURCE],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    ids = iter(range(1, 10_000))

    def call(cmd, timeout=10, limit=65536, cwd=None, op=None):
        request = {"id": next(ids), "cmd": cmd, "timeout": timeout, "limit": limit, "cwd": cwd, "op": op}
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == request["id"]
        return reply

    yield call
    proc.kill()
    proc.wait()


def test_runs_commands_and_keeps_exit_codes_and_streams(server):
    reply = server("echo out; echo err >&2; exit_code=3; (exit $exit_code)")
    assert (reply["stdout"], reply["stderr"], reply["exit_code"]) == ("out\n", "err\n", 3)


def test_output_without_trailing_newline_is_kept_exactly(server):
    assert server("printf 'no newline'")["stdout"] == "no newline"


def test_shell_state_persists_between_commands(server, tmp_path):
    (tmp_path / "sub").mkdir()
    server("cd sub && export GREETING=hi")
    reply = server("pwd; echo $GREETING")
    assert reply["stdout"] == f"{tmp_path / 'sub'}\n" + "hi\n"


def test_quotes_and_multiline_commands_survive(server):
    reply = server("echo 'it'\\''s'\ncat <<'EOF'\n$HOME stays literal\nEOF")
    assert reply["stdout"] == "it's\n$HOME stays literal\n"


def test_commands_do_not_read_the_servers_stdin(server):
    assert server("cat; echo done")["stdout"] == "done\n"


def test_timeout_kills_the_command_and_its_children_and_restarts_the_shell(server):
    started = time.monotonic()
    reply = server("sleep 60 & sleep 60; echo never", timeout=1)
    assert reply["timed_out"] and reply["exit_code"] == 124
    assert time.monotonic() - started < 5
    assert "never" not in reply["stdout"]
    assert server("echo alive")["stdout"] == "alive\n"


def test_flood_is_capped_keeping_head_and_tail(server):
    reply = server("seq 1 2000000", limit=10_000)
    assert reply["truncated"]
    assert len(reply["stdout"]) < 11_000
    assert reply["stdout"].startswith("1\n2\n") and reply["stdout"].rstrip().endswith("2000000")
    assert "evalkit truncated" in reply["stdout"]


def test_exit_in_a_command_restarts_the_shell(server):
    reply = server("exit 7")
    assert reply["exit_code"] == 7
    assert server("echo again")["stdout"] == "again\n"


def test_explicit_cwd_is_entered_first(server, tmp_path):
    assert server("pwd", cwd="/")["stdout"] == "/\n"


def test_kill_all_as_root_outside_a_sandbox_leaves_the_machine_alone(server):
    """kill(-1) as root on a host would SIGKILL every process (dockerd included); in a sandbox the
    server runs as the unprivileged agent. The shell is still replaced."""
    assert os.getuid() == 0, "run as root, as CI does: as another user kill(-1) would end this session"
    bystander = subprocess.Popen(["sleep", "300"])
    try:
        reply = server("", op="kill_all")
        assert reply["exit_code"] == 0
        assert bystander.poll() is None
        assert server("echo alive")["stdout"] == "alive\n"
    finally:
        bystander.kill()
        bystander.wait()
