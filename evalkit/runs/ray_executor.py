"""`--executor ray`: each attempt a Ray task on a node of a cluster (docs/cluster.md).

A task asks for one `sandbox` resource (a node advertises how many containers it holds with
`ray start --resources '{"sandbox": N}'`) and no CPU, runs the whole attempt on that node's own
Docker engine, and returns the outcome (record and trajectory bytes) to the driver, which writes
them to the run folder as for a local attempt. A node that dies mid-attempt makes Ray run the task
again elsewhere (`NODE_RETRIES` times); an attempt's own failure is not retried by Ray (an attempt
records its failures; what escapes it is one line from the node). The job is put in the object
store once and shared by every attempt; at most `concurrency` attempts are submitted at a time.

On Ctrl-C the attempts in flight are cancelled: first gently (the attempt's `finally` removes its
containers), then, past `CANCEL_GRACE_S`, by killing the worker; a killed worker's containers
are swept by the next evalkit backend opened on that node's engine."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from evalkit.errors import EvalkitError
from evalkit.runs.executor import NodeFailure
from evalkit.sandbox.protocol import SandboxBackend

INSTALL_HINT = "pip install 'evalkit[ray]'"
SANDBOX_RESOURCE = "sandbox"
NODE_RETRIES = 2  # runs again of one attempt whose node (or worker process) died under it
CANCEL_GRACE_S = 20.0  # after Ctrl-C: how long cancelled attempts get to remove their containers
WAIT_S = 0.25

Item = TypeVar("Item")
Result = TypeVar("Result")


def _call(job: Callable[[Any], Any], item: Any) -> Any:
    """What a Ray worker runs: the job on the item (both unpickled on the node)."""
    return job(item)


class RayExecutor:
    name = "ray"
    remote = True  # jobs and items travel to other processes: they must be picklable

    def __init__(self, ray_module: Any, address: str) -> None:
        self._ray = ray_module
        self.address = address
        self._stopped = threading.Event()
        self._remote: Any = None

    @classmethod
    def connect(cls, address: str | None) -> RayExecutor:
        """Attach to the cluster at `address` (None: RAY_ADDRESS, else the one this machine runs);
        one line when Ray is missing, no cluster answers, or no node offers a `sandbox`."""
        try:
            import ray
        except ImportError:
            raise EvalkitError(f"--executor ray: Ray is not installed; install it with {INSTALL_HINT}") from None
        target = address or os.environ.get("RAY_ADDRESS") or "auto"
        if not ray.is_initialized():
            try:
                ray.init(address=target, logging_level="ERROR", log_to_driver=False, configure_logging=True)
            except (ConnectionError, RuntimeError, ValueError) as exc:
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
                raise EvalkitError(
                    f"--executor ray: no Ray cluster at {target} ({first}); start one with "
                    f"`ray start --head --resources '{{\"{SANDBOX_RESOURCE}\": 2}}'` or give --ray-address"
                ) from None
        slots = ray.cluster_resources().get(SANDBOX_RESOURCE, 0)
        if slots < 1:
            ray.shutdown()
            raise EvalkitError(
                f"--executor ray: no node of the cluster at {target} offers a `{SANDBOX_RESOURCE}` resource; "
                f"start each node with `ray start ... --resources '{{\"{SANDBOX_RESOURCE}\": N}}'` "
                "(N: the containers it can hold)"
            )
        return cls(ray, target)

    def reachable_host(self) -> str:
        """The driver's address as the cluster's nodes reach it (never 127.0.0.1 of the driver)."""
        return self._ray.util.get_node_ip_address()

    def slots(self) -> int:
        return int(self._ray.cluster_resources().get(SANDBOX_RESOURCE, 0))

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
        """Run `job` on every item as Ray tasks, at most `concurrency` submitted at a time; report
        each as it ends, and submit it again when the report returns True (fan_out's contract)."""
        ray = self._ray
        remote = self._remote_call()
        job_ref = ray.put(job)
        queue = list(items)
        queue.reverse()  # pop() from the end takes them in plan order
        in_flight: dict[Any, Item] = {}
        try:
            while queue or in_flight:
                while queue and len(in_flight) < max(1, concurrency):
                    item = queue.pop()
                    in_flight[remote.remote(job_ref, item)] = item
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=WAIT_S)
                for ref in ready:
                    item = in_flight.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as exc:  # a node's one line, a dead node past its retries, an unpicklable item
                        again = on_error(item, NodeFailure(one_line_of(exc)))
                    else:
                        again = on_result(item, result)
                    if again:
                        queue.append(item)
        except BaseException:
            self._cancel(list(in_flight))
            raise

    def _remote_call(self) -> Any:
        if self._remote is None:
            self._remote = self._ray.remote(_call).options(
                num_cpus=0,
                resources={SANDBOX_RESOURCE: 1},
                max_retries=NODE_RETRIES,
                retry_exceptions=False,
                name="evalkit-job",
            )
        return self._remote

    def call(self, job: Callable[[Item], Result], item: Item) -> Result:
        """`job(item)` on a node, waited for; what escaped it is a `NodeFailure` of one line."""
        ray = self._ray
        ref = self._remote_call().remote(job, item)
        while not ray.wait([ref], timeout=WAIT_S)[0]:
            if self._stopped.is_set():
                self._cancel([ref])
                raise NodeFailure("cancelled")
        try:
            return ray.get(ref)
        except Exception as exc:
            raise NodeFailure(one_line_of(exc)) from None

    def stop_calls(self) -> None:
        self._stopped.set()

    def _cancel(self, refs: list[Any]) -> None:
        """Cancel attempts in flight: gently first (their containers are removed on the way out),
        then by killing the workers of those still running after the grace period."""
        ray = self._ray
        for ref in refs:
            ray.cancel(ref, force=False)
        deadline = time.monotonic() + CANCEL_GRACE_S
        pending = refs
        while pending and time.monotonic() < deadline:
            _, pending = ray.wait(pending, num_returns=len(pending), timeout=WAIT_S)
        for ref in pending:
            with contextlib.suppress(Exception):  # already finished, or gone with its node
                ray.cancel(ref, force=True)

    def close(self) -> None:
        self._ray.shutdown()


def one_line_of(error: BaseException) -> str:
    """One line for what a Ray task raised: the cause's own message (a node's `NodeError`, an
    unpickling error) without Ray's traceback, or the kind of cluster failure."""
    cause = getattr(error, "cause", None)
    if isinstance(cause, BaseException) and str(cause).strip():
        text = str(cause).strip().splitlines()[0]
        if "node " not in text:
            text = f"{type(cause).__name__}: {text}"
        return text[:300]
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    message = next((line for line in reversed(lines) if not line.startswith(("File ", "Traceback"))), "")
    return f"{type(error).__name__}: {message}"[:300]
