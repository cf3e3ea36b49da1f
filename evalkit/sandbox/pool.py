"""SandboxPool: sandboxes made before they are asked for, so that opening one is a hand-over.

A run knows which sandboxes it will open (`SandboxBackend.prepare`): an agent sandbox per
attempt, in plan order, each followed by a scoring sandbox for the same task. The pool keeps at
most `capacity` of them warming or ready (made, started, workspace in, command server up), soonest
first; a request's `then` (the scoring sandbox) starts warming the moment its predecessor is
handed over, ahead of the further plan, since the same worker asks for it next. A follow-up is
owed to the thread that took its predecessor: when that thread asks for anything else, the
follow-up will never be asked for (the attempt ended without scoring) and is removed.

Sandboxes are never reused: each is handed over once, so a pooled sandbox is as clean as a fresh
one. Whatever goes wrong ahead of need (a failed warm-up, an engine that restarted since, a
sandbox still warming past `WAIT_S`) makes `take` return None and the caller opens its own: the
pool can slow nothing down but itself. Closed sandboxes are removed in the background (`later`)
so the attempt does not wait for it; `close()` waits for the warm-ups and the removals."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from evalkit.sandbox.protocol import SandboxRequest

POOL_SLACK = 1  # sandboxes made ahead beyond one per concurrent worker (`capacity = concurrency + POOL_SLACK`)
WAIT_S = 120.0  # longest wait for a sandbox already warming before opening another instead
CLOSE_WAIT_S = 30.0  # longest wait, on close, for warm-ups and removals in flight (an engine may hang)
WARM_COMMAND_TIMEOUT_S = 60.0


class _Closable(Protocol):
    def exec(self, cmd: str, timeout: float | None = None) -> object: ...

    def close(self) -> None: ...


S = TypeVar("S", bound=_Closable)


@dataclass(eq=False)
class _Ahead(Generic[S]):
    """One expected open: queued, warming, ready, or failed (done without a sandbox)."""

    request: SandboxRequest
    owner: int | None  # the thread that will ask for it (a follow-up), or None: any thread
    started: bool = False
    sandbox: S | None = None
    generation: int = 0
    abandoned: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    @property
    def failed(self) -> bool:
        return self.done.is_set() and self.sandbox is None


@dataclass
class PoolCounts:
    """What the pool did, for benchmarks and tests: sandboxes handed over, asked for and not
    found ready (opened by the caller), warm-ups that failed, made and never asked for."""

    handed: int = 0
    missed: int = 0
    failed: int = 0
    unused: int = 0


class SandboxPool(Generic[S]):
    """Sandboxes made by `make(request)` ahead of need, at most `capacity` warming or ready at
    once. `generation()` changes when every sandbox made before became unusable (an engine
    restart): those are removed instead of handed over. `engine_ready()` blocks while the engine
    is known to be down (raising once it is given up), so that an outage does not use up the plan
    in failed warm-ups."""

    def __init__(
        self,
        make: Callable[[SandboxRequest], S],
        capacity: int,
        generation: Callable[[], int],
        engine_ready: Callable[[], None] = lambda: None,
    ) -> None:
        self._make = make
        self._engine_ready = engine_ready
        self._capacity = max(1, capacity)
        self._generation = generation
        self._ahead: list[_Ahead[S]] = []
        self._lock = threading.Lock()
        self._warmers = cf.ThreadPoolExecutor(max_workers=self._capacity, thread_name_prefix="evalkit-pool")
        self._reaper = cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="evalkit-reaper")
        self._in_flight: set[cf.Future] = set()
        self._closed = False
        self.counts = PoolCounts()

    def plan(self, requests: Sequence[SandboxRequest]) -> None:
        """Expect these opens, after those already expected."""
        with self._lock:
            if self._closed:
                return
            self._ahead.extend(_Ahead(request, owner=None) for request in requests)
            self._fill()

    def take(self, request: SandboxRequest) -> S | None:
        """The sandbox made for `request` (waiting for it while it warms), or None: the caller
        opens one itself. Either way the expected open is used up and its follow-up owed."""
        thread = threading.get_ident()
        with self._lock:
            if self._closed:
                return None
            for stale in [a for a in self._ahead if a.owner == thread and a.request.key != request.key]:
                self._abandon(stale)
            item = self._match(request.key, thread)
            if item is not None:
                self._ahead.remove(item)
            then = item.request.then if item is not None else None
            if then is not None:
                self._ahead.insert(0, _Ahead(then, owner=thread))
            self._fill()
        sandbox = self._wait(item) if item is not None and item.started else None
        with self._lock:
            if sandbox is None:
                self.counts.missed += 1
            else:
                self.counts.handed += 1
        return sandbox

    def later(self, job: Callable[[], None]) -> None:
        """Run `job` (a removal) in the background; once the pool is closed, at once."""
        with self._lock:
            if not self._closed:
                self._track(self._reaper.submit(job))
                return
        job()

    def close(self) -> int:
        """Stop warming, wait (at most `CLOSE_WAIT_S`) for warm-ups and removals in flight, and
        close every sandbox made and not handed over; how many that was (a warm-up still running
        past the wait closes its own, uncounted)."""
        with self._lock:
            if self._closed:
                return 0
            self._closed = True
            unused_before = self.counts.unused
            items, self._ahead = self._ahead, []
            for item in items:
                item.abandoned = True
                item.done.set()  # whoever waits for it opens its own (or finds the backend closed)
            in_flight = set(self._in_flight)
        cf.wait(in_flight, timeout=CLOSE_WAIT_S)
        self._warmers.shutdown(wait=False, cancel_futures=True)
        self._reaper.shutdown(wait=False, cancel_futures=True)
        ready = [item.sandbox for item in items if item.sandbox is not None]
        with self._lock:
            self.counts.unused += len(ready)
        for sandbox in ready:
            sandbox.close()
        return self.counts.unused - unused_before  # warm-ups that ended since closed theirs

    # -- inside the lock ----------------------------------------------------------------------
    def _match(self, key: tuple, thread: int) -> _Ahead[S] | None:
        """The expected open `key` uses up: this thread's follow-up first, then the readiest."""
        mine = [a for a in self._ahead if a.request.key == key and a.owner in (thread, None)]
        if not mine:
            return None
        return min(mine, key=lambda a: (a.owner != thread, a.failed, not a.done.is_set(), not a.started))

    def _fill(self) -> None:
        active = sum(1 for a in self._ahead if a.started and not a.failed)
        for item in self._ahead:
            if active >= self._capacity:
                break
            if not item.started:
                item.started = True
                active += 1
                self._track(self._warmers.submit(self._warm, item))

    def _abandon(self, item: _Ahead[S]) -> None:
        """A follow-up that will not be asked for: removed now if made, else when it is."""
        self._ahead.remove(item)
        item.abandoned = True
        if item.sandbox is not None:
            self.counts.unused += 1
            self._track(self._reaper.submit(item.sandbox.close))

    def _track(self, future: cf.Future) -> None:
        self._in_flight.add(future)
        future.add_done_callback(self._in_flight.discard)

    # -- outside the lock ---------------------------------------------------------------------
    def _warm(self, item: _Ahead[S]) -> None:
        """Make the sandbox and start its command server; on any failure leave the item failed."""
        sandbox: S | None = None
        if item.abandoned:  # the pool closed (or the item was dropped) before its turn came
            item.done.set()
            return
        try:
            self._engine_ready()
            item.generation = self._generation()
            sandbox = self._make(item.request)
            result = sandbox.exec(":", timeout=WARM_COMMAND_TIMEOUT_S)
            if not getattr(result, "ok", False):
                raise RuntimeError("the sandbox does not run commands")
        except Exception:
            if sandbox is not None:
                with contextlib.suppress(Exception):
                    sandbox.close()
            sandbox = None
        with self._lock:
            keep = sandbox is not None and not item.abandoned and not self._closed
            if keep:
                item.sandbox = sandbox
            elif sandbox is None:
                self.counts.failed += 1
            else:
                self.counts.unused += 1
            item.done.set()
            self._fill()
        if sandbox is not None and not keep:
            with contextlib.suppress(Exception):
                sandbox.close()

    def _wait(self, item: _Ahead[S]) -> S | None:
        """The item's sandbox once made, if still usable; else None (and it is removed)."""
        item.done.wait(WAIT_S)
        with self._lock:
            item.abandoned = True  # taken: a warm-up finishing later closes what it made
            sandbox, item.sandbox = item.sandbox, None
        if sandbox is not None and item.generation != self._generation():
            self.later(sandbox.close)
            return None
        return sandbox
