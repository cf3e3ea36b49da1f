"""The default executor: every attempt on a thread pool of this process, on the local engine."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from evalkit.runs.fan_out import fan_out

Item = TypeVar("Item")
Result = TypeVar("Result")


class LocalExecutor:
    name = "local"
    remote = False
    run = staticmethod(fan_out)  # the Executor contract is fan_out's

    def reachable_host(self) -> str:
        return "127.0.0.1"

    def close(self) -> None:
        pass

    def notes(self) -> list[str]:
        return []

    def slots(self) -> int | None:
        return None

    @staticmethod
    def call(job: Callable[[Item], Result], item: Item) -> Result:
        return job(item)

    def stop_calls(self) -> None:
        pass  # a local call stops when its containers go (the backend's close)

    @classmethod
    def connect(cls, address: str | None) -> LocalExecutor:
        return cls()
