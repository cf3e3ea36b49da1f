"""One SWE-bench prediction scored where a cluster executor puts it (`evaluate --executor ray`):
the patch against the task's hidden tests on the node's own engine, from the task and the
workspace archive the driver built (a node needs neither the suite folder nor the repository)."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.integrity import IntegrityPolicy
from evalkit.runs.node_backend import node_backend
from evalkit.runs.task_payload import TaskPayload
from evalkit.verify.correctness import CorrectnessResult
from evalkit.verify.prediction_verdict import prediction_verdict


@dataclass(frozen=True)
class PatchOnNode:
    """A prediction's patch and the task it is for, as they travel (picklable)."""

    payload: TaskPayload
    patch: str


@dataclass(frozen=True)
class NodeEvaluation:
    """What every evaluation on a node shares (picklable)."""

    run_id: str
    backend: str
    policy: IntegrityPolicy

    def __call__(self, item: PatchOnNode) -> CorrectnessResult:
        with node_backend(self.backend, self.run_id, item.payload) as (backend, task):
            return prediction_verdict(task, item.patch, backend, self.policy)
