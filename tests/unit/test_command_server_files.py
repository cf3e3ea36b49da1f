"""The command server's file operations (`read`, `write`), done in its own process rather than by
a command: run on the host, as the other command server tests are."""

import base64
import itertools
import json
import os
import stat
import subprocess
import sys

import pytest

from evalkit.sandbox.command_channel import SERVER_SOURCE, encode_request


@pytest.fixture
def server(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-u", "-c", SERVER_SOURCE], cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    ids = itertools.count(1)

    def call(**request):
        proc.stdin.write(encode_request({**request, "id": next(ids)}))
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    yield call
    proc.kill()
    proc.wait()


def write(server, path, data: bytes):
    return server(op="write", path=path, data=base64.b64encode(data).decode())


def test_a_100_kb_binary_file_is_written_byte_for_byte_making_parent_folders(server, tmp_path):
    data = bytes(range(256)) * 400
    assert write(server, "deep/er/blob.bin", data)["exit_code"] == 0
    assert (tmp_path / "deep/er/blob.bin").read_bytes() == data


def test_a_rewrite_replaces_the_whole_file_and_keeps_its_mode(server, tmp_path):
    script = tmp_path / "run.sh"
    script.write_text("x" * 100_000)
    script.chmod(0o755)
    assert write(server, "run.sh", b"ok\n")["exit_code"] == 0
    assert script.read_bytes() == b"ok\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_text_is_read_back_and_a_large_file_keeps_head_and_tail(server, tmp_path):
    (tmp_path / "small.txt").write_text("héllo\n")
    assert server(op="read", path="small.txt")["stdout"] == "héllo\n"
    (tmp_path / "big.txt").write_text("head" + "x" * 5_000_000 + "tail")
    reply = server(op="read", path="big.txt", limit=10_000)
    assert reply["truncated"] and reply["stdout"].startswith("headxxx") and reply["stdout"].endswith("xxxtail")
    assert "evalkit truncated 4990008 bytes" in reply["stdout"] and len(reply["stdout"]) < 10_100


def test_relative_paths_are_taken_from_the_shells_current_folder(server, tmp_path):
    (tmp_path / "sub").mkdir()
    server(cmd="cd sub")
    assert write(server, "here.txt", b"in sub\n")["exit_code"] == 0
    assert (tmp_path / "sub/here.txt").read_text() == "in sub\n"
    assert server(op="read", path="here.txt")["stdout"] == "in sub\n"
    assert server(op="read", path=str(tmp_path / "sub/here.txt"))["stdout"] == "in sub\n"


def test_failures_are_replies_with_the_reason_not_crashes(server, tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "plain").write_text("")
    assert (server(op="read", path="missing")["exit_code"], server(op="read", path="missing")["stderr"]) == (
        1,
        "No such file or directory",
    )
    assert server(op="read", path="folder")["stderr"] == "is a folder"
    assert write(server, "plain/under", b"x")["stderr"] == "File exists"
    assert write(server, "folder", b"x")["stderr"] == "Is a directory"
    assert server(cmd="echo still here")["stdout"] == "still here\n"


def test_a_pipe_is_read_by_a_command_under_the_timeout(server, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    reply = server(op="read", path="fifo", timeout=1)
    assert reply["timed_out"] and reply["exit_code"] == 124
    assert write(server, "fifo", b"nobody reads")["exit_code"] == 1  # an error, not a wait for a reader
