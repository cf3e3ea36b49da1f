"""The command channel speaks the server's JSON-lines protocol over any byte stream: here the
real command server runs on the host behind a pipe that hands its output over in pieces."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from evalkit.sandbox.command_channel import SERVER_SOURCE, CommandChannel


class PipeStream:
    """The server's stdin and stdout as a byte stream, read at most `chunk` bytes at a time."""

    def __init__(self, proc: subprocess.Popen, chunk: int) -> None:
        self.proc, self.chunk = proc, chunk

    def settimeout(self, seconds: float) -> None:
        pass  # a pipe read blocks; the tests' commands end at once

    def sendall(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def receive(self) -> bytes:
        data = os.read(self.proc.stdout.fileno(), self.chunk)
        if not data:
            raise ConnectionError("command server exited")
        return data

    def close(self) -> None:
        self.proc.stdin.close()


@pytest.fixture(params=[1, 65536], ids=["byte-by-byte", "whole-chunks"])
def channel(request, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-u", "-c", SERVER_SOURCE], cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    yield CommandChannel(PipeStream(proc, request.param))
    proc.kill()
    proc.wait()


def call(channel: CommandChannel, request_id: int, cmd: str) -> dict:
    return channel.request({"id": request_id, "cmd": cmd, "timeout": 10, "limit": 65536, "cwd": None}, 10)


def test_replies_come_back_in_order_however_the_stream_splits_them(channel):
    first = call(channel, 1, "printf 'é\\n%.0s' 1 2 3; echo err >&2; (exit 4)")
    second = call(channel, 2, "echo two")
    assert (first["id"], first["stdout"], first["stderr"], first["exit_code"]) == (1, "é\n" * 3, "err\n", 4)
    assert (second["id"], second["stdout"], second["exit_code"]) == (2, "two\n", 0)


def test_a_server_that_exits_is_a_connection_error(channel):
    with pytest.raises(ConnectionError):
        call(channel, 1, "kill -9 $PPID")
