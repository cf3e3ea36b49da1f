"""One task validated where a cluster executor puts it (`tasks validate --executor ray`): the
reference patch and the empty one scored on the node's own engine, from the task and the
workspace archive the driver built (a node needs neither the suite folder nor the repository)."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.runs.node_backend import node_backend
from evalkit.runs.task_payload import TaskPayload
from evalkit.verify.health import TaskHealth, validate_task


@dataclass(frozen=True)
class NodeValidation:
    """What every validation on a node shares (picklable)."""

    run_id: str
    backend: str
    gold_runs: int

    def __call__(self, item: TaskPayload) -> TaskHealth:
        with node_backend(self.backend, self.run_id, item) as (backend, task):
            return validate_task(task, backend, self.gold_runs)
