"""The host side of the command server's protocol (command_server.py): one JSON object per line
each way, over any byte stream. The transport (Docker's attach socket, with its stream framing,
in docker_sandbox.py) only moves bytes; what a request and a reply look like is known here alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Protocol

SERVER_SOURCE = (Path(__file__).parent / "command_server.py").read_text()  # run as `python3 -u -c SOURCE`


class ByteStream(Protocol):
    """A two-way byte stream to a running command server."""

    def settimeout(self, seconds: float) -> None:
        """How long `receive` may wait for bytes before raising (OSError, as a socket does)."""
        ...

    def sendall(self, data: bytes) -> None: ...

    def receive(self) -> bytes:
        """The next bytes of the server's stdout; ConnectionError once the server has exited."""
        ...

    def close(self) -> None: ...


def encode_request(payload: dict) -> bytes:
    return (json.dumps(payload) + "\n").encode()


class CommandChannel:
    """Requests written as JSON lines, replies read back line by line (a reply may arrive in
    pieces, or with the start of the next one)."""

    def __init__(self, stream: ByteStream) -> None:
        self._stream = stream
        self._pending = bytearray()

    def request(self, payload: dict, wait_s: float) -> dict:
        """Send one request and return its reply; `wait_s` bounds each wait for more bytes.
        Raises OSError/ConnectionError when the stream fails and ValueError for a bad reply."""
        self._stream.settimeout(wait_s)
        self._stream.sendall(encode_request(payload))
        end = self._pending.find(b"\n")
        while end < 0:  # a large reply comes in many pieces: look for the end in the new one only
            searched = len(self._pending)
            self._pending += self._stream.receive()
            end = self._pending.find(b"\n", searched)
        line = bytes(self._pending[:end])
        del self._pending[: end + 1]
        return json.loads(line)

    def close(self) -> None:
        self._stream.close()
