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
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from evalkit.errors import EvalkitError
from evalkit.runs.executor import NodeFailure
from evalkit.runs.node_backend import NodeError
from evalkit.sandbox.protocol import SandboxBackend

INSTALL_HINT = "pip install 'evalkit[ray]'"
SANDBOX_RESOURCE = "sandbox"
NODE_RETRIES = 2  # runs again of one attempt whose node died under it, or could not start it
NODE_ID_LABEL = "ray.io/node-id"  # the label every Ray node carries
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
        self._lock = threading.Lock()
        self._left_out: dict[str, str] = {}  # Ray node id → the one line that made it left out

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

    def slots(self) -> int | None:
        return int(self._ray.cluster_resources().get(SANDBOX_RESOURCE, 0)) or None

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
        job_ref = ray.put(job)
        queue = list(enumerate(items))
        queue.reverse()  # pop() from the end takes them in plan order
        in_flight: dict[Any, tuple[int, Item]] = {}
        moved: Counter[int] = Counter()  # runs of an item sent elsewhere because its node could not start it
        try:
            while queue or in_flight:
                while queue and len(in_flight) < max(1, concurrency):
                    number, item = queue.pop()
                    in_flight[self._submit(job_ref, item)] = (number, item)
                ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=WAIT_S)
                for ref in ready:
                    number, item = in_flight.pop(ref)
                    try:
                        result = ray.get(ref)
                    except Exception as exc:  # a node's one line, a dead node past its retries, an unpicklable item
                        if moved[number] < NODE_RETRIES and self._leave_out(exc):
                            moved[number] += 1
                            queue.append((number, item))
                            continue
                        again = on_error(item, NodeFailure(one_line_of(exc)))
                    else:
                        again = on_result(item, result)
                    if again:
                        queue.append((number, item))
        except BaseException:
            self._cancel(list(in_flight))
            raise

    def _submit(self, job: Any, item: Any) -> Any:
        """One Ray task of `job` on `item`, kept off the nodes left out."""
        if self._remote is None:
            self._remote = self._ray.remote(_call)
        options: dict[str, Any] = {
            "num_cpus": 0,
            "resources": {SANDBOX_RESOURCE: 1},
            "max_retries": NODE_RETRIES,
            "retry_exceptions": False,
            "name": "evalkit-job",
        }
        with self._lock:
            left_out = sorted(self._left_out)
        if left_out:
            options["label_selector"] = {NODE_ID_LABEL: f"!in({','.join(left_out)})"}
        return self._remote.options(**options).remote(job, item)

    def _leave_out(self, error: BaseException) -> bool:
        """Whether `error` is a node saying it cannot start jobs (no engine, a key not set there):
        then no job goes there again in this run, and the job runs elsewhere if a node is left."""
        cause = getattr(error, "cause", None)
        if not isinstance(cause, NodeError) or cause.node_id is None:
            return False
        with self._lock:
            self._left_out[cause.node_id] = str(cause)
            left_out = set(self._left_out)
        alive = [n for n in self._ray.nodes() if n.get("Alive") and n.get("NodeID") not in left_out]
        return any(n.get("Resources", {}).get(SANDBOX_RESOURCE, 0) >= 1 for n in alive)

    def notes(self) -> list[str]:
        """What the user should hear after the run: the nodes left out, and why."""
        with self._lock:
            return [f"left out of this run: {reason}" for reason in self._left_out.values()]

    def call(self, job: Callable[[Item], Result], item: Item) -> Result:
        """`job(item)` on a node, waited for; what escaped it is a `NodeFailure` of one line."""
        ray = self._ray
        for moves in range(NODE_RETRIES + 1):
            ref = self._submit(job, item)
            while not ray.wait([ref], timeout=WAIT_S)[0]:
                if self._stopped.is_set():
                    self._cancel([ref])
                    raise NodeFailure("cancelled")
            try:
                return ray.get(ref)
            except Exception as exc:
                if moves < NODE_RETRIES and self._leave_out(exc):
                    continue
                raise NodeFailure(one_line_of(exc)) from None
        raise AssertionError("unreachable")

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
