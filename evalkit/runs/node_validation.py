"""One task validated where a cluster executor puts it (`tasks validate --executor ray`): the
reference patch and the empty one scored on the node's own engine, from the task and the
workspace archive the driver built (a node needs neither the suite folder nor the repository)."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.runs.node_attempt import NodeError, node_name
from evalkit.runs.task_payload import TaskPayload
from evalkit.sandbox.registry import open_backend
from evalkit.verify.health import TaskHealth, validate_task


@dataclass(frozen=True)
class NodeValidation:
    """What every validation on a node shares (picklable)."""

    run_id: str
    backend: str
    gold_runs: int

    def __call__(self, item: TaskPayload) -> TaskHealth:
        try:
            backend = open_backend(self.backend, self.run_id)
        except Exception as exc:
            raise NodeError(f"node {node_name()}: {exc}") from None
        try:
            task = item.landed()
            backend.adopt_workspace(task, item.workspace)
            return validate_task(task, backend, self.gold_runs)
        finally:
            backend.close()
