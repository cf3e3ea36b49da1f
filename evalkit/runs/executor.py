"""Executors: what runs the attempts of a plan (`--executor`). The local one is the thread pool on
this machine's engine; a cluster one (Ray, docs/ray-notes.md) runs each attempt on a node of its
own. Both report each item as it ends, and run it again when the report returns True, so the
orchestrator appends rows and decides retries the same way whatever runs the attempts."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, TypeVar

from evalkit.errors import EvalkitError
from evalkit.sandbox.protocol import SandboxBackend

Item = TypeVar("Item")
Result = TypeVar("Result")


class NodeFailure(Exception):
    """What reached the driver instead of a job's result (a node that died or could not start
    the job, an item that would not unpickle there), as one line."""


class Executor(Protocol):
    name: str
    remote: bool  # runs jobs in other processes or machines: jobs and items must be picklable

    def reachable_host(self) -> str:
        """This machine's address as the executor's workers reach it (for the built-in models)."""
        ...

    def close(self) -> None:
        """Detach (a cluster stays up for other runs)."""
        ...

    def slots(self) -> int | None:
        """How many jobs the executor can run at once (a cluster's `sandbox` total), None: no fixed number."""
        ...

    def notes(self) -> list[str]:
        """Lines for the user once the work is done (a cluster's nodes left out, and why)."""
        ...

    def run(
        self,
        items: Iterable[Item],
        job: Callable[[Item], Result],
        *,
        backend: SandboxBackend,
        concurrency: int,
        on_result: Callable[[Item, Result], bool | None],
        on_error: Callable[[Item, BaseException], bool | None],
    ) -> None:
        """Run `job` on every item with at most `concurrency` at a time (fan_out's contract)."""
        ...

    def call(self, job: Callable[[Item], Result], item: Item) -> Result:
        """Run one job where this executor runs jobs and wait for it, for a caller that keeps its
        own threads (gather: screening and journaling stay on this machine, validation goes out)."""
        ...

    def stop_calls(self) -> None:
        """Make calls in flight give up (Ctrl-C): they raise instead of waiting."""
        ...


def concurrency_for(executor: Executor, concurrency: int, given: bool) -> int:
    """`--concurrency` as typed, else what the executor holds at once (a cluster's sandboxes)."""
    return concurrency if given else max(1, executor.slots() or concurrency)


def check_registry_use(registry: str | None, executor: str) -> None:
    if registry is not None and executor == "local":
        raise EvalkitError(f"--registry {registry}: images go through a registry for --executor ray only")
