"""A gather candidate's tests run where a cluster executor puts them (`gather --executor ray`):
the driver screens, writes the prompt and the environment recipe, and journals; a node runs the
tests before and after the change from the task that travelled (workspace and recipe folder)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from evalkit.gather.history import DEFAULT_PYTHON_FILES
from evalkit.gather.validate import CandidateTests, validate_candidate
from evalkit.runs.node_backend import node_backend, node_name
from evalkit.runs.task_payload import TaskPayload


@dataclass(frozen=True)
class CandidateOnNode:
    payload: TaskPayload  # the provisional task
    neighbours: list[str]  # existing test modules run beside the touched ones
    patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES  # the project's `python_files`
    test_files: list[str] | None = None  # the modules to run (None: the test part's modules)


@dataclass(frozen=True)
class NodeCandidateCheck:
    """What every candidate check on a node shares (picklable)."""

    run_id: str
    backend: str
    runs: int
    max_pass_to_pass: int
    max_ids_per_test: int

    def __call__(self, item: CandidateOnNode) -> CandidateTests:
        with node_backend(self.backend, self.run_id, item.payload) as (backend, task):
            tests = validate_candidate(
                task, backend, self.runs, self.max_pass_to_pass, item.neighbours, self.max_ids_per_test, item.patterns,
                item.test_files,
            )  # fmt: skip
        return replace(tests, node=node_name())
