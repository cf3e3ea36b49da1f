"""The verdict on a patch that comes without a trajectory (a SWE-bench prediction): the hidden
tests' result, with the diff and the test run scanned for tampering and, under the `fail`
policy, a flagged pass counted as unresolved. `evalkit evaluate` asks for it here or, with
`--executor ray`, on a cluster node (runs/node_evaluation.py)."""

from __future__ import annotations

from evalkit.integrity import IntegrityPolicy, counts_as_resolved
from evalkit.sandbox.protocol import SandboxBackend
from evalkit.tasks.model import Task
from evalkit.verify.correctness import CorrectnessResult, evaluate_patch
from evalkit.verify.integrity_scan import scan_attempt


def prediction_verdict(task: Task, patch: str, backend: SandboxBackend, policy: IntegrityPolicy) -> CorrectnessResult:
    result = evaluate_patch(task, patch, backend)
    report = scan_attempt([], patch, result.integrity_flags, [r.label() for r in result.restored])
    resolved = counts_as_resolved(result.resolved, report, policy)
    return result.model_copy(update={"resolved": resolved, "integrity_flags": report.flags})
