"""The guard's runtime half (loaded by guard_plugin.py from its own folder, before any code under
test runs; standard library only, Python 3.6 and later): the channel that takes each piece of
evidence out of the test process as it is made, and an audit hook (PEP 578) that records the
primitives an in-process forger needs.

The channel is a Unix socket to evalkit's collector (collector_server.py), run as root in the
scoring sandbox: what was sent cannot be taken back, and what the collector wrote the sandbox user
cannot rewrite. The socket is held by the `send` closure alone.

The audit hook cannot be removed from Python code. It records, and sends at once (before the
audited operation proceeds), these events when code from a file the candidate changed is on the
stack (its callers' files are `changed`):
- `gc` object walks (`gc.get_objects`, `get_referrers`, `get_referents`): how code finds the
  guard's state, its plugin manager or its socket without a name;
- frames taken by the candidate's own code (`sys._getframe`, `sys._current_frames`, the caller
  itself: logging and warnings take frames for everyone), the way into the runner's locals;
- trace and profile functions set, `ctypes`, new audit hooks, and the `__code__`, `__defaults__`
  or `__kwdefaults__` of a function of the runner or the guard replaced (`protected`: libraries
  set those on their own functions, jinja's filters for one);
- evalkit's own files opened, renamed or removed (`scratch`: its folder), and sockets made;
- processes started (kept to be judged at the end: whether any outlived the run).
Besides, evalkit's files written by anyone but pytest's JUnit writer and the guard are recorded
whoever is on the stack. Which events honest libraries raise was measured on the shipped suites'
reference changes (none of these, by their changed files); code run from a file that does not
exist (exec of built code) is not attributed, a limit docs/design.md states."""

import json
import os
import socket
import sys

LIMIT_PER_EVENT = 20  # records of one event kind kept: the first tell is enough, a flood is none
DEPTH = 60  # frames looked at for candidate code
GC_EVENTS = ("gc.get_objects", "gc.get_referrers", "gc.get_referents")
FRAME_EVENTS = ("sys._getframe", "sys._current_frames")
HOOK_EVENTS = ("sys.settrace", "sys.setprofile", "sys.addaudithook", "sys._setprofileallthreads")
SPAWN_EVENTS = ("subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system", "os.exec")
PATH_EVENTS = ("os.rename", "os.remove", "os.truncate", "os.symlink", "os.link", "os.chmod", "shutil.copyfile")
SWAPPED = ("__code__", "__defaults__", "__kwdefaults__")
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def open_channel(path):
    """A `send(message)` writing one JSON line per message to the collector's socket at `path`,
    connected now; None when there is no collector (a run outside a sandbox)."""
    if not path:
        return None
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(path)
    except OSError:
        return None
    sendall, dumps = sock.sendall, json.dumps

    def send(message):
        try:
            sendall((dumps(message, default=str) + "\n").encode("utf-8", "replace"))
        except (OSError, TypeError, ValueError):
            pass  # a closed channel is the collector's evidence: it never saw the final message

    return send


def install_audit(send, record, changed, scratch, writers, protected=()):
    """Add the audit hook; `record(entry)` keeps an entry for the guard's report, `send` (or None)
    sends it at once; `changed`: real paths of the candidate's files; `scratch`: evalkit's folder;
    `writers`: real paths of the files whose code may write there (pytest's JUnit writer, the
    guard); `protected`: real folders of the runner's code (pytest, pluggy, unittest). Returns
    `spawns()`: the spawn entries so far. No hook before Python 3.8."""
    if not hasattr(sys, "addaudithook"):
        return lambda: []
    getframe, realpath, fspath = sys._getframe, os.path.realpath, os.fspath
    candidates, writers = frozenset(changed), frozenset(writers)
    files = {}  # a code object's file -> (is the candidate's, is a writer's)
    counts, spawned, busy = {}, [], [False]
    scratch = scratch.rstrip("/") + "/"
    guarded = tuple(folder.rstrip("/") + "/" for folder in protected) + (scratch,)

    def runner_code(function):
        code = getattr(function, "__code__", None)
        filename = getattr(code, "co_filename", "") or ""
        return isinstance(filename, str) and realpath(filename).startswith(guarded)

    def kind_of(filename):
        known = files.get(filename)
        if known is None:
            real = realpath(filename) if filename and not filename.startswith("<") else ""
            known = files[filename] = (real in candidates, real in writers)
        return known

    def candidate_frame(frame, immediate):
        depth = 0
        while frame is not None and depth < (1 if immediate else DEPTH):
            if kind_of(frame.f_code.co_filename)[0]:
                return "%s:%d" % (frame.f_code.co_filename, frame.f_lineno)
            frame, depth = frame.f_back, depth + 1
        return None

    def keep(event, detail, where):
        counts[event] = counts.get(event, 0) + 1
        if counts[event] > LIMIT_PER_EVENT:
            return
        entry = {"event": event, "detail": detail, "where": where}
        record(entry)
        if send is not None:
            send({"kind": "runtime", "entry": entry})

    def ours(path):
        try:
            return isinstance(path, (str, bytes)) and realpath(fspath(path)).startswith(scratch)
        except (TypeError, ValueError):
            return False

    def judge(event, args, caller):
        if event == "open":
            path, mode, flags = (list(args) + [None, None, None])[:3]
            if not ours(path) or path == scratch:
                return
            writing = ("w" in (mode or "") or "a" in (mode or "") or "+" in (mode or "")) or bool(
                isinstance(flags, int) and flags & WRITE_FLAGS and mode is None
            )
            where = candidate_frame(caller, False)
            if where is not None:
                keep("open", "%s (%s)" % (path, mode or flags), where)
            elif writing and not kind_of(caller.f_code.co_filename)[1]:
                keep("open", "%s (%s)" % (path, mode or flags), "%s:%d" % (caller.f_code.co_filename, caller.f_lineno))
            return
        if event in PATH_EVENTS:
            targets = [a for a in args[:2] if ours(a)]
            if targets and not kind_of(caller.f_code.co_filename)[1]:
                keep(event, str(targets[0]), "%s:%d" % (caller.f_code.co_filename, caller.f_lineno))
            return
        if event in SPAWN_EVENTS:
            where = candidate_frame(caller, False)
            spawned.append({"event": event, "where": where})
            return
        if event in FRAME_EVENTS:
            where = candidate_frame(caller, True)
        elif event == "object.__setattr__":
            if len(args) < 2 or args[1] not in SWAPPED or not callable(args[0]) or not runner_code(args[0]):
                return
            where = candidate_frame(caller, False)
        elif event in GC_EVENTS or event in HOOK_EVENTS or event.startswith("ctypes.") or event == "socket.__new__":
            where = candidate_frame(caller, False)
        elif event == "os.listdir" and args and str(args[0]).startswith("/proc/"):
            where = candidate_frame(caller, False)
        else:
            return
        if where is not None:
            detail = args[1] if event == "object.__setattr__" else ""
            keep(event, str(detail), where)

    def hook(event, args):
        if busy[0]:
            return
        busy[0] = True
        try:
            judge(event, args, getframe(1))
        except Exception:
            pass
        finally:
            busy[0] = False

    sys.addaudithook(hook)
    return lambda: list(spawned)
