"""Fan-out: run one job per item on a thread pool, with progress, and a clean stop on Ctrl-C.

On Ctrl-C (or SIGTERM, which the CLI turns into Ctrl-C) every container the backend still holds
is removed before the interrupt propagates; jobs not yet started are cancelled, and results
already delivered are kept by the caller. A caller that wants an item run again (its sandbox
was lost with the Docker engine) returns True from `on_result` or `on_error`: the item is queued
once more, behind the others.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterable
from typing import TypeVar

from evalkit.sandbox.protocol import SandboxBackend

Item = TypeVar("Item")
Result = TypeVar("Result")


def fan_out(
    items: Iterable[Item],
    job: Callable[[Item], Result],
    *,
    backend: SandboxBackend,
    concurrency: int,
    on_result: Callable[[Item, Result], bool | None],
    on_error: Callable[[Item, BaseException], bool | None],
    stop: Callable[[], None] | None = None,
) -> None:
    """Run `job` on every item with at most `concurrency` at a time; report each as it ends, and
    run it again when the report returns True. On an interrupt `stop` (when given) is called
    beside the backend's close: jobs waiting on something else (a cluster) give up too."""
    pool = cf.ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="evalkit")
    futures = {pool.submit(job, item): item for item in items}
    pending = set(futures)
    try:
        while pending:
            done, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
            for future in done:
                item = futures.pop(future)
                error = future.exception()
                again = on_result(item, future.result()) if error is None else on_error(item, error)
                if again:
                    retry = pool.submit(job, item)
                    futures[retry] = item
                    pending.add(retry)
    except BaseException:
        for future in pending:
            future.cancel()
        if stop is not None:
            stop()
        backend.close()  # running jobs fail fast once their containers are gone
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
