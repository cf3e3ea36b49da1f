"""The default executor: every attempt on a thread pool of this process, on the local engine."""

from __future__ import annotations

from evalkit.runs.fan_out import fan_out


class LocalExecutor:
    name = "local"
    remote = False
    run = staticmethod(fan_out)  # the Executor contract is fan_out's

    def reachable_host(self) -> str:
        return "127.0.0.1"

    def close(self) -> None:
        pass

    @classmethod
    def connect(cls, address: str | None) -> LocalExecutor:
        return cls()
