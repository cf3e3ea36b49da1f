"""The in-container command server: one long-lived process hosting one persistent bash shell.

Started once per sandbox with `python3 -u -c <this file's text>` through a single `docker exec`,
it reads one JSON request per line on stdin and writes one JSON reply per line on stdout.
A `docker exec` costs ~100 ms; a command here costs what bash needs to run it (a builtin:
well under a millisecond), and `cd` and exported variables persist between commands, as in a
terminal. On a timeout the shell's whole process group is killed and a fresh shell started.
Output is capped inside the container (head and tail kept), so a flood never crosses the
socket. Standard library only: it must run on any image with a python3 (3.7 or later).

Files are read and written by this process itself (ops `read` and `write`), not through the
shell: bash reads a command from a pipe one byte at a time, so a 100 kB file sent as a
heredoc cost ~50 ms, and `cat`, `mkdir` and `base64` a process each. The server runs as the
sandbox user, so the permissions are the same; a relative path is taken from the shell's
current folder, as a command's would be.
"""

import base64
import errno
import json
import os
import secrets
import selectors
import signal
import stat
import subprocess
import sys
import time


class CappedBuffer:
    """Keeps the first and last `limit // 2` bytes of a stream and counts the rest."""

    def __init__(self, limit):
        self.half = max(limit // 2, 1)
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk):
        self.total += len(chunk)
        room = self.half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    @property
    def truncated(self):
        return self.total > len(self.head) + len(self.tail)

    def skip(self, count):
        """`count` bytes of the stream pass unseen (what the tail kept so far is older: dropped)."""
        self.total += count
        del self.tail[:]

    def text(self):
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        dropped = self.total - len(self.head) - len(self.tail)
        marker = "\n[... evalkit truncated %d bytes of output ...]\n" % dropped
        return bytes(self.head).decode("utf-8", "replace") + marker + bytes(self.tail).decode("utf-8", "replace")


class MarkedStream:
    """Reads one shell output stream up to the end-of-command marker line, capping what it keeps."""

    def __init__(self, marker, limit):
        self.marker = b"\n" + marker
        self.buffer = CappedBuffer(limit)
        self.held = b""  # not yet known to be output rather than the start of the marker
        self.done = False
        self.trailer = b""

    def feed(self, chunk):
        data = self.held + chunk
        at = data.find(self.marker)
        if at >= 0:
            end = data.find(b"\n", at + len(self.marker))
            if end < 0:
                self.held = data
                return
            self.buffer.add(data[:at])
            self.trailer = data[at + len(self.marker) : end]
            self.done = True
            self.held = b""
            return
        keep = len(self.marker) + 16
        self.buffer.add(data[:-keep] if len(data) > keep else b"")
        self.held = data[-keep:] if len(data) > keep else data

    def flush(self):
        self.buffer.add(self.held)
        self.held = b""


def quote(text):
    return "'" + text.replace("'", "'\\''") + "'"


class Shell:
    """A bash process in its own session, fed commands on stdin."""

    def __init__(self, cwd):
        self.proc = subprocess.Popen(
            ["/bin/bash", "--noprofile", "--norc"] if os.path.exists("/bin/bash") else ["/bin/sh"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                pipe.close()
            except OSError:
                pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def alive(self):
        return self.proc.poll() is None


class Server:
    def __init__(self):
        self.home = os.getcwd()
        self.shell = Shell(self.home)

    def live_shell(self):
        if not self.shell.alive():
            self.shell = Shell(self.home)
        return self.shell

    def run(self, request):
        limit = int(request.get("limit", 65536))
        timeout = float(request.get("timeout") or 120)
        shell = self.live_shell()
        token = ("__EVALKIT_%s__" % secrets.token_hex(8)).encode()
        prefix = "cd -- %s && " % quote(request["cwd"]) if request.get("cwd") else ""
        # stdin from /dev/null: a command must never read the requests meant for the shell.
        script = "%seval %s < /dev/null\n__ek_rc=$?\nprintf '\\n%s %%d\\n' \"$__ek_rc\"\nprintf '\\n%s\\n' >&2\n" % (
            prefix,
            quote(request["cmd"]),
            token.decode(),
            token.decode(),
        )
        started = time.monotonic()
        out, err = MarkedStream(token, limit), MarkedStream(token, limit)
        try:
            shell.proc.stdin.write(script.encode())
            shell.proc.stdin.flush()
        except OSError:
            pass
        sel = selectors.DefaultSelector()
        sel.register(shell.proc.stdout, selectors.EVENT_READ, out)
        sel.register(shell.proc.stderr, selectors.EVENT_READ, err)
        deadline = started + timeout
        timed_out = False
        while not (out.done and err.done):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            events = sel.select(remaining)
            for key, _ in events:
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:  # the shell exited (`exit`, or killed)
                    sel.unregister(key.fileobj)
                    key.data.done = True
                    continue
                if not key.data.done:
                    key.data.feed(chunk)
        sel.close()
        exit_code = None
        if out.trailer.strip():
            exit_code = int(out.trailer.strip())
        notice = ""
        if timed_out:
            shell.kill()
            exit_code = 124
            notice = "\n[evalkit: command timed out after %gs; the shell was restarted]\n" % timeout
        elif exit_code is None:  # shell died without reaching the marker
            shell.kill()
            exit_code = shell.proc.returncode if shell.proc.returncode is not None else 125
            exit_code = 128 - exit_code if exit_code < 0 else exit_code
            notice = "\n[evalkit: the shell exited; a new one was started]\n"
        out.flush()
        err.flush()
        return {
            "exit_code": exit_code,
            "stdout": out.buffer.text(),
            "stderr": err.buffer.text() + notice,
            "duration": time.monotonic() - started,
            "truncated": out.buffer.truncated or err.buffer.truncated,
            "timed_out": timed_out,
        }

    def kill_all(self, request=None):
        """Kill every process this user may signal but this server (kill(-1) needs no new process,
        so it works even when a fork bomb holds every pid)."""
        if os.getuid() != 0:  # as root (a server started by hand on a host) kill(-1) ends the machine
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        self.shell.kill()
        self.shell = Shell(self.home)
        return reply(0, time.monotonic())

    # -- files, in this process ------------------------------------------------------------
    def resolve(self, path):
        """`path` as a command would see it: relative to the shell's current folder."""
        shell = self.live_shell()
        try:
            cwd = os.readlink("/proc/%d/cwd" % shell.proc.pid)
        except OSError:  # no /proc (a host without it): the folder the shell started in
            cwd = self.home
        return os.path.join(cwd, path)

    def read(self, request):
        """A file's text, capped like a command's output (head and tail kept)."""
        started = time.monotonic()
        limit = int(request.get("limit", 65536))
        path = self.resolve(request["path"])
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without waiting for a writer
        except OSError as exc:
            return failure(exc, started)
        try:
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                return failure(OSError(errno.EISDIR, "is a folder"), started)
            if not stat.S_ISREG(info.st_mode):  # a pipe or a device may never end: `cat`, under the timeout
                return self.run({"cmd": "cat -- %s" % quote(path), "timeout": request.get("timeout"), "limit": limit})
            kept = CappedBuffer(limit)
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                kept.add(chunk)
                unseen = info.st_size - kept.half - kept.total
                if len(kept.head) >= kept.half and unseen > 0:  # a large file: jump to its tail
                    os.lseek(fd, unseen, os.SEEK_CUR)
                    kept.skip(unseen)
        except OSError as exc:
            return failure(exc, started)
        finally:
            os.close(fd)
        return reply(0, started, stdout=kept.text(), truncated=kept.truncated)

    def write(self, request):
        """Create or replace a file (the bytes arrive base64-encoded), making parent folders."""
        started = time.monotonic()
        path = self.resolve(request["path"])
        data = memoryview(base64.b64decode(request["data"]))
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            # O_NONBLOCK: a FIFO without a reader is an error, not a wait. No O_TRUNC: ext4 flushes a
            # file emptied and rewritten when it is closed (~1.3 ms for 100 kB); cut it after instead.
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK, 0o666)
            try:
                size = len(data)
                while data:
                    data = data[os.write(fd, data) :]
                if stat.S_ISREG(os.fstat(fd).st_mode):
                    os.ftruncate(fd, size)
            finally:
                os.close(fd)
        except OSError as exc:
            return failure(exc, started)
        return reply(0, started)


def reply(exit_code, started, stdout="", stderr="", truncated=False, timed_out=False):
    return {
        "exit_code": exit_code,
        "stdout": stdout,
        "stderr": stderr,
        "duration": time.monotonic() - started,
        "truncated": truncated,
        "timed_out": timed_out,
    }


def failure(exc, started):
    """A file operation's error as a failed command's: exit 1, the reason (`Permission denied`) in stderr."""
    return reply(1, started, stderr=exc.strerror or str(exc))


OPS = {"run": Server.run, "kill_all": Server.kill_all, "read": Server.read, "write": Server.write}


def request_lines(fd):
    """The lines of `fd`, read in large pieces: a 100 kB write request in a few reads, not in the
    8 kB ones of `sys.stdin` (each of which lets the pipe's writer run again)."""
    pending = bytearray()
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            if pending:
                yield bytes(pending)
            return
        searched = len(pending)
        pending += chunk
        end = pending.find(b"\n", searched)
        while end >= 0:
            yield bytes(pending[:end])
            del pending[: end + 1]
            end = pending.find(b"\n")


def main():
    server = Server()
    for line in request_lines(sys.stdin.fileno()):
        if not line.strip():
            continue
        request = json.loads(line)
        started = time.monotonic()
        try:
            answer = OPS[request.get("op") or "run"](server, request)
        except Exception as exc:  # a reply must always come back, or the host waits forever
            answer = reply(126, started, stderr="evalkit command server: %r" % (exc,))
        answer["id"] = request.get("id")
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
