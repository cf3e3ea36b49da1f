"""Whether a backend's engine answers, watched for a whole run by one thread (engine-neutral: the
Docker backend gives it its ping and its check of which errors mean the engine is gone,
evalkit/sandbox/docker/engine_errors.py).

When dockerd stops (a restart, an upgrade, a crash), every Docker call fails at once: without
this, each attempt not yet started would fail in no time as `sandbox_error` and the run would end
early. Instead one thread pings the engine (every second while it answers, with capped backoff
while it does not); attempts ask `ready()` before they start and block while the engine is down;
an attempt that failed asks `lost_since()` whether the engine went away under it, and is run again
once it is back. Past `max_wait_s` without an answer the engine is given up on and every waiting
attempt raises `EngineUnavailable`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from evalkit.errors import SandboxError, causes

DEFAULT_WAIT_S = 300.0
HEARTBEAT_S = 1.0  # between pings while the engine answers
BACKOFF_FIRST_S = 0.5  # between pings while it does not: doubled each time, capped
BACKOFF_CAP_S = 5.0
_ASK_TIMEOUT_S = 150.0  # a ping waits at most the client's timeout (120 s)

# An engine's verdict on one error: True, it says the engine did not answer; False, it is about
# one of the engine's objects (an image, a container); None, not the engine's error at all.
UnreachableCheck = Callable[[BaseException], "bool | None"]


def no_engine_errors(error: BaseException) -> bool | None:
    """The check of a backend with no engine that can go away: no error is its engine's."""
    return None


def unreachable_by(check: UnreachableCheck, error: BaseException) -> bool:
    """Whether an error, or one it was raised from, says the engine did not answer (no connection,
    a timeout, a cut response, a server error) as the engine's own `check` judges it; an error
    about one container or image, or no engine's, is not."""
    for current in causes(error):
        verdict = check(current)
        if verdict is not None:
            return verdict
    return False


class EngineUnavailable(SandboxError):
    """The engine did not answer within the bound; the run stops (and can be resumed)."""

    def __init__(self, waited_s: float) -> None:
        super().__init__(f"the Docker engine did not answer for {waited_s:.0f} s")
        self.waited_s = waited_s


@dataclass(frozen=True)
class EngineEvent:
    """A change of the engine's state, as told to listeners (the run display)."""

    kind: Literal["down", "up", "gone"]
    down_s: float  # how long it had not answered (0 when it just went down)
    max_wait_s: float
    reason: str = ""  # why the ping failed ("down")

    def line(self) -> str:
        if self.kind == "down":
            return f"Docker engine unavailable ({self.reason}); attempts paused, waiting up to {self.max_wait_s:.0f} s"
        if self.kind == "up":
            return f"Docker engine back after {self.down_s:.0f} s; attempts resume"
        return f"Docker engine did not answer for {self.down_s:.0f} s; stopping the run"


def engine_error_reason(error: BaseException) -> str:
    """A short reason for a failed Docker call: the error's type and the operating system's word
    for what failed ("Connection refused", "No such file or directory"), not requests' nesting."""
    cause = _os_error_within(error, depth=4)
    text = cause.strerror if cause is not None else str(error).split("(", 1)[0].strip().rstrip(":")
    return f"{type(error).__name__}: {text}"[:120] if text else type(error).__name__


def _os_error_within(error: BaseException, depth: int) -> OSError | None:
    """The first OSError with an errno message inside an error's args, causes and contexts."""
    if isinstance(error, OSError) and error.strerror:
        return error
    if depth == 0:
        return None
    inner = [a for a in error.args if isinstance(a, BaseException)] + [error.__cause__, error.__context__]
    for candidate in inner:
        found = candidate and _os_error_within(candidate, depth - 1)
        if found:
            return found
    return None


class EngineWatch:
    """The engine's state for every worker of a run; only the watching thread pings.

    Use `watching()` around the work. `outages` counts the times the engine stopped answering."""

    def __init__(
        self,
        ping: Callable[[], object],
        max_wait_s: float = DEFAULT_WAIT_S,
        *,
        unreachable: UnreachableCheck = no_engine_errors,
        heartbeat_s: float = HEARTBEAT_S,
        backoff_cap_s: float = BACKOFF_CAP_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ping = ping
        self._unreachable = unreachable
        self.max_wait_s = max_wait_s
        self.heartbeat_s = heartbeat_s
        self.backoff_cap_s = backoff_cap_s
        self._clock = clock
        self._cond = threading.Condition()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._stopping = False
        self._gone = False
        self._down_since: float | None = None
        self._pings = 0  # finished pings, so that a question waits for a fresh answer
        self._pinging = False
        self._listeners: list[Callable[[EngineEvent], None]] = []
        self.outages = 0

    def subscribe(self, listener: Callable[[EngineEvent], None]) -> None:
        """Call `listener` (from the watching thread) when the engine goes down, comes back or is given up."""
        self._listeners.append(listener)

    # -- lifecycle --------------------------------------------------------------------------
    @contextmanager
    def watching(self, max_wait_s: float | None = None) -> Iterator[EngineWatch]:
        """Watch the engine for the duration of the block."""
        with self._cond:
            if max_wait_s is not None:
                self.max_wait_s = max_wait_s
            self._stopping = self._gone = False
            self._thread = threading.Thread(target=self._watch, name="evalkit-engine-watch", daemon=True)
            self._thread.start()
        try:
            yield self
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop watching; attempts waiting for the engine give up at once."""
        with self._cond:
            self._stopping = True
            thread, self._thread = self._thread, None
            self._cond.notify_all()
        self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=5)  # a ping in progress may hold it; it is a daemon thread

    # -- questions from workers --------------------------------------------------------------
    def unreachable(self, error: BaseException) -> bool:
        """Whether `error` (or one it was raised from) says this engine did not answer."""
        return unreachable_by(self._unreachable, error)

    def down_for(self) -> float | None:
        """Seconds the engine has not been answering; None while it answers."""
        with self._cond:
            return None if self._down_since is None else self._clock() - self._down_since

    def answers(self) -> bool:
        """Ask the engine now (through the watching thread when there is one)."""
        with self._cond:
            if self._thread is None:
                self._pinging = True
            else:
                target = self._pings + (2 if self._pinging else 1)  # a ping under way may predate the question
                self._wake.set()
                answered = lambda: self._pings >= target or self._stopping or self._gone  # noqa: E731
                self._cond.wait_for(answered, timeout=_ASK_TIMEOUT_S)
                return self._down_since is None
        self._check()  # not watching: the caller pings
        with self._cond:
            return self._down_since is None

    def ready(self) -> None:
        """Before an attempt: return once the engine answers; raise `EngineUnavailable` past the bound."""
        with self._cond:
            known_down = self._down_since is not None
        if known_down or not self.answers():
            self.wait_until_up()

    def wait_until_up(self) -> None:
        """Block while the engine is down; raise `EngineUnavailable` once it is given up (or the watch stops)."""
        with self._cond:
            while self._down_since is not None and not (self._gone or self._stopping):
                self._cond.wait()
            if self._down_since is not None:
                raise EngineUnavailable(self._clock() - self._down_since)

    def lost_since(self, outages: int, error: BaseException | None = None) -> bool:
        """After an attempt failed: did the engine stop answering since `outages` was read, or
        does it not answer a fresh ping now? An `error` the engine's check calls unreachable counts
        at once. Any other error still asks: an engine shutting down stops taking new connections,
        then kills its containers while still answering on the connections it has, so an attempt
        can fail with an error about its own container (409 "is not running") before a ping failed."""
        if self.outages > outages or (error is not None and self.unreachable(error)):
            return True
        return not self.answers()

    # -- the watching thread -----------------------------------------------------------------
    def _watch(self) -> None:
        first = backoff = min(BACKOFF_FIRST_S, self.backoff_cap_s)
        while True:
            with self._cond:
                if self._stopping:
                    return
                self._pinging = True
            up = self._check()
            with self._cond:
                if self._gone or self._stopping:
                    return
                if up:
                    backoff, pause = first, self.heartbeat_s
                else:
                    assert self._down_since is not None
                    left = self._down_since + self.max_wait_s - self._clock()
                    pause, backoff = max(0.0, min(backoff, left)), min(backoff * 2, self.backoff_cap_s)
            if self._wake.wait(pause):
                self._wake.clear()

    def _check(self) -> bool:
        """One ping; update the state, wake waiters and tell listeners what changed."""
        try:
            self._ping()
            error = None
        except Exception as exc:  # noqa: BLE001 - any failure to answer is the engine not answering
            error = exc
        with self._cond:
            self._pings += 1
            self._pinging = False
            event = self._record(error)
            self._cond.notify_all()
        if event is not None:
            for listener in self._listeners:
                listener(event)
        return error is None

    def _record(self, error: BaseException | None) -> EngineEvent | None:
        now = self._clock()
        if error is None:
            if self._down_since is None:
                return None
            down_s, self._down_since = now - self._down_since, None
            return EngineEvent("up", down_s, self.max_wait_s)
        if self._down_since is None:
            self._down_since = now
            self.outages += 1
            return EngineEvent("down", 0.0, self.max_wait_s, engine_error_reason(error))
        down_s = now - self._down_since
        if down_s >= self.max_wait_s and not self._gone:
            self._gone = True
            return EngineEvent("gone", down_s, self.max_wait_s)
        return None
