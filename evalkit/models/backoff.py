"""Backoff and what the clients of one endpoint share.

Many attempts run against one server at once. Without coordination, each worker that meets a 429
retries on its own schedule and the server keeps being hammered; and a local server with a few
slots answers timeouts when given more requests than it can hold. So every ChatClient of one
endpoint (resolved base URL + model) in a process shares an EndpointState: at most
`max_connections` requests in flight, and a "not before" moment set by a 429 (or any Retry-After)
that every request to that endpoint waits for before it is sent. The state also counts the retries
and the requests given up, with the last reason, so that a person watching the run sees a failing
endpoint at once rather than a minute later in an attempt's error.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
from collections import Counter
from collections.abc import Callable

import openai

MAX_BACKOFF_S = 60.0


def retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked to wait (`retry-after-ms`, `Retry-After` in seconds or a date)."""
    headers = exc.response.headers
    if "retry-after-ms" in headers:
        try:
            return float(headers["retry-after-ms"]) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, parsed.timestamp() - time.time())


def backoff_s(attempt: int, base_s: float, suggested: float | None) -> float:
    """The server's suggestion if any, else exponential from `base_s` with jitter; capped."""
    if suggested is not None:
        return min(MAX_BACKOFF_S, suggested)
    return min(MAX_BACKOFF_S, base_s * 2**attempt) * random.uniform(0.8, 1.2)


class EndpointState:
    """Requests in flight, the shared "not before" moment, and the failures of one endpoint;
    thread-safe. `on_failure` is called (outside the lock) after each retry or give-up."""

    def __init__(
        self, max_connections: int | None = None, on_failure: Callable[[EndpointState], None] | None = None
    ) -> None:
        self._cond = threading.Condition()
        self.max_connections = max_connections
        self._in_flight = 0
        self._waiting = 0
        self._not_before = 0.0  # time.monotonic()
        self._rate_limited = 0
        self._retries: Counter[str] = Counter()  # retry kind → requests retried
        self._gave_up = 0  # requests that ended an attempt as endpoint_error
        self._last_failure: str | None = None  # "kind: detail" of the latest failed request
        self._last_kind: str | None = None  # "kind" or "kind (HTTP status)": what a reason change means
        self._on_failure = on_failure

    def limit(self, max_connections: int | None) -> None:
        """Clients of one endpoint may disagree: the strictest limit holds."""
        if max_connections is None:
            return
        with self._cond:
            if self.max_connections is None or max_connections < self.max_connections:
                self.max_connections = max_connections

    def acquire(self, deadline: float) -> bool:
        """Wait for a free slot and the end of any hold-off; False if `deadline` comes first."""
        with self._cond:
            self._waiting += 1
            try:
                while True:
                    now = time.monotonic()
                    hold = self._not_before - now
                    full = self.max_connections is not None and self._in_flight >= self.max_connections
                    if not full and hold <= 0:
                        self._in_flight += 1
                        return True
                    if now >= deadline:
                        return False
                    self._cond.wait(min(deadline - now, hold) if hold > 0 else deadline - now)
            finally:
                self._waiting -= 1

    def release(self) -> None:
        with self._cond:
            self._in_flight -= 1
            self._cond.notify_all()

    def hold_off(self, seconds: float, *, rate_limited: bool) -> None:
        """No request to this endpoint is sent in the next `seconds` (a 429 or a Retry-After)."""
        with self._cond:
            self._not_before = max(self._not_before, time.monotonic() + seconds)
            self._rate_limited += rate_limited

    def note_failure(self, kind: str, status: int | None, detail: str, *, gave_up: bool = False) -> None:
        """A failed request: retried (`kind` counted), or the last one of an attempt (`gave_up`)."""
        with self._cond:
            if gave_up:
                self._gave_up += 1
            else:
                self._retries[kind] += 1
            self._last_kind = f"{kind} (HTTP {status})" if status else kind
            self._last_failure = f"{self._last_kind}: {detail}"
        if self._on_failure is not None:
            self._on_failure(self)

    def status(self) -> dict:
        with self._cond:
            return {
                "in_flight": self._in_flight,
                "waiting": self._waiting,
                "waiting_until": round(max(0.0, self._not_before - time.monotonic()), 3),
                "rate_limited": self._rate_limited,
                "max_connections": self.max_connections,
                "retries": dict(self._retries),
                "gave_up": self._gave_up,
                "last_failure": self._last_failure,
                "last_failure_kind": self._last_kind,
            }


class EndpointStates:
    """Endpoint states by (base URL, model). Create one per run and give it to every ChatClient;
    clients given none share `SHARED_ENDPOINTS`, so that one process never hammers one server."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._states: dict[tuple[str, str], EndpointState] = {}
        self._listeners: list[Callable[[dict], None]] = []

    def state(self, base_url: str, model: str, max_connections: int | None) -> EndpointState:
        key = (base_url.rstrip("/"), model)
        with self._lock:
            state = self._states.get(key)
            if state is None:
                state = self._states[key] = EndpointState(max_connections, lambda s: self._failed(key, s))
        state.limit(max_connections)
        return state

    def snapshot(self) -> list[dict]:
        """Every endpoint's `status()` with its `base_url` and `model`, for a live display."""
        with self._lock:
            states = list(self._states.items())
        return [{"base_url": url, "model": model, **state.status()} for (url, model), state in states]

    def on_failure(self, listener: Callable[[dict], None]) -> Callable[[], None]:
        """Call `listener` with the endpoint's snapshot entry after each failed request (from the
        worker's thread); returns the function that stops it."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def _failed(self, key: tuple[str, str], state: EndpointState) -> None:
        with self._lock:
            listeners = list(self._listeners)
        if listeners:
            status = {"base_url": key[0], "model": key[1], **state.status()}
            for listener in listeners:
                listener(status)


SHARED_ENDPOINTS = EndpointStates()
