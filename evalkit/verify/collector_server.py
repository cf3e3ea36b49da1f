"""evalkit's collector: the reader of the guard's channel, run as root in the scoring sandbox
(`python3 -c SOURCE FOLDER`) before the hidden tests start. Never imported by evalkit: its
source is sent to the sandbox, like the command server's. Standard library only, any python3.

It listens on a Unix socket in FOLDER (root's, mode 0711: the sandbox user can reach the socket
by its name, not list or write the folder) and appends every line any connection sends, with the
connection's number and its peer's pid and uid (SO_PEERCRED, which the peer cannot choose), to
FOLDER/evidence.jsonl (root's, 0600). A line, once written, is beyond the test process's reach:
it cannot be taken back or rewritten. The first connection is the guard's (it connects as it
loads, before any code under test); every other one is recorded as what it is. Past LIMIT bytes
the rest is counted, not kept (a flood is evidence too)."""

import json
import os
import socket
import struct
import sys
import threading

LIMIT = 64 * 1024 * 1024
LINE_LIMIT = 4 * 1024 * 1024


def main(folder):
    os.makedirs(folder, mode=0o711, exist_ok=True)
    os.chmod(folder, 0o711)
    path = os.path.join(folder, "channel.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    os.chmod(path, 0o666)
    server.listen(64)
    out = open(os.path.join(folder, "evidence.jsonl"), "a")
    os.chmod(out.name, 0o600)
    lock, written, numbers = threading.Lock(), [0], iter(range(1 << 30))

    def record(entry):
        line = json.dumps(entry) + "\n"
        with lock:
            if written[0] + len(line) > LIMIT:
                if written[0] <= LIMIT:
                    out.write(json.dumps({"conn": entry.get("conn"), "event": "flood"}) + "\n")
                    out.flush()
                    written[0] = LIMIT + 1
                return
            written[0] += len(line)
            out.write(line)
            out.flush()

    def serve(conn, number):
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, _ = struct.unpack("3i", creds)
        except OSError:
            pid = uid = -1
        record({"conn": number, "event": "open", "pid": pid, "uid": uid})
        buffer = b""
        while True:
            try:
                data = conn.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            buffer += data
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                record({"conn": number, "line": line.decode("utf-8", "replace")})
            if len(buffer) > LINE_LIMIT:
                record({"conn": number, "line": buffer[:1024].decode("utf-8", "replace"), "cut": True})
                buffer = b""
        if buffer:
            record({"conn": number, "line": buffer.decode("utf-8", "replace"), "unterminated": True})
        record({"conn": number, "event": "closed"})
        conn.close()

    with open(os.path.join(folder, "ready"), "w"):
        pass
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, next(numbers)), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1])
