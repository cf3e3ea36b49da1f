"""fan_out: an item whose report asks for it again is run again, behind the items still queued."""

from __future__ import annotations

import threading

import pytest

from evalkit.runs.fan_out import fan_out


class NoContainers:
    """fan_out's backend is only asked to close (remove containers) on an interrupt or error."""

    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> int:
        self.closed += 1
        return 0


def test_an_item_reported_as_to_be_run_again_runs_again_after_the_queued_ones():
    runs: list[str] = []
    lock = threading.Lock()

    def job(item: str) -> str:
        with lock:
            runs.append(item)
        return item

    asked_again: set[str] = set()

    def on_result(item: str, result: str) -> bool:
        if item == "a" and item not in asked_again:
            asked_again.add(item)
            return True
        return False

    reported: list[str] = []
    fan_out(
        ["a", "b", "c"],
        job,
        backend=NoContainers(),  # type: ignore[arg-type]
        concurrency=1,
        on_result=lambda item, result: reported.append(item) or on_result(item, result),
        on_error=lambda item, error: None,
    )
    assert runs == ["a", "b", "c", "a"]
    assert sorted(reported) == ["a", "a", "b", "c"]


def test_an_error_the_report_raises_stops_the_run_and_closes_the_backend():
    backend = NoContainers()

    def job(item: int) -> int:
        if item == 0:
            raise RuntimeError("engine gone")
        return item

    def on_error(item: int, error: BaseException) -> None:
        raise error

    with pytest.raises(RuntimeError, match="engine gone"):
        fan_out(range(5), job, backend=backend, concurrency=1, on_result=lambda i, r: None, on_error=on_error)  # type: ignore[arg-type]
    assert backend.closed == 1
