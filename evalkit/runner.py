"""Fan-out: run one job per item on a thread pool, with progress, and a clean stop on Ctrl-C.

On Ctrl-C (or SIGTERM, which the CLI turns into Ctrl-C) every container the backend still holds
is removed before the interrupt propagates; jobs not yet started are cancelled, and results
already delivered are kept by the caller.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Iterable
from typing import TypeVar

from evalkit.sandbox.backend import DockerBackend

Item = TypeVar("Item")
Result = TypeVar("Result")


def fan_out(
    items: Iterable[Item],
    job: Callable[[Item], Result],
    *,
    backend: DockerBackend,
    concurrency: int,
    on_result: Callable[[Item, Result], None],
    on_error: Callable[[Item, BaseException], None],
) -> None:
    """Run `job` on every item with at most `concurrency` at a time; report each as it ends."""
    pool = cf.ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="evalkit")
    futures = {pool.submit(job, item): item for item in items}
    pending = set(futures)
    try:
        while pending:
            done, pending = cf.wait(pending, timeout=0.25, return_when=cf.FIRST_COMPLETED)
            for future in done:
                item = futures[future]
                error = future.exception()
                if error is None:
                    on_result(item, future.result())
                else:
                    on_error(item, error)
    except BaseException:
        for future in pending:
            future.cancel()
        backend.close()  # running jobs fail fast once their containers are gone
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
