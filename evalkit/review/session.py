"""Reviews of many changes: one read-only review sandbox per task, opened at the task's first
review and closed when the next task's begins (callers review a task's changes together), each
review's transcript written where the caller says.

The sandbox runs the project's plainest image (`REVIEW_IMAGE`: git, grep and Python), not the
task's environment: the reviewer reads files and runs nothing, so a review needs no build of the
task's dependencies. It has no network. A sandbox that cannot be opened is the verdict's error."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.review.review_tools import ReviewTools
from evalkit.review.review_trees import ReviewTrees
from evalkit.review.reviewer import ReviewCase, Reviewer
from evalkit.review.verdict import ReviewVerdict
from evalkit.sandbox.protocol import Sandbox, SandboxBackend
from evalkit.tasks.model import Task
from evalkit.trajectory import TrajectoryWriter

REVIEW_IMAGE = "python"
ROLE = "review"


def review_task(task: Task) -> Task:
    """`task` as its review sandbox is opened: the same base tree on `REVIEW_IMAGE`."""
    metadata = {k: v for k, v in task.metadata.items() if k != "environment"}
    return task.model_copy(update={"image": REVIEW_IMAGE, "metadata": metadata})


class ReviewSession:
    """`reviewer`'s reviews, agentic ones in sandboxes of `backend` (None: no-tools reviews only)."""

    def __init__(self, reviewer: Reviewer, backend: SandboxBackend | None = None) -> None:
        self.reviewer = reviewer
        self.backend = backend if reviewer.mode == "agentic" else None
        self._task_id: str | None = None
        self._sandbox: Sandbox | None = None
        self._trees: ReviewTrees | None = None
        self._sandbox_error: str | None = None

    def _trees_of(self, task: Task) -> ReviewTrees | None:
        if self.backend is None:
            return None
        if task.id != self._task_id:
            self._close_sandbox()
            self._task_id = task.id
            try:
                self._sandbox = self.backend.open(review_task(task), ROLE)
                self._trees = ReviewTrees(self._sandbox, task.patch)
                self._trees.freeze_base()
            except (EvalkitError, OSError) as exc:  # SandboxError is an EvalkitError
                self._sandbox_error = f"review sandbox: {exc}"
                self._close_sandbox(keep_error=True)
        return self._trees

    def review(
        self, task: Task, candidate: str, transcript: Path | None = None, prompt: str | None = None
    ) -> ReviewVerdict:
        """The verdict on `candidate` (a diff against `task`'s base); `prompt` the request as the
        agent saw it (default the task's)."""
        trees = self._trees_of(task)
        if self.backend is not None and trees is None:
            return ReviewVerdict(
                reviewer=self.reviewer.name, mode=self.reviewer.mode, score=None, error=self._sandbox_error
            )
        try:
            applied = trees.show(candidate) if trees is not None else True
            case = ReviewCase(prompt or task.prompt, candidate, task.patch, task.metadata.get("rubric"), applied)
            tools = ReviewTools(trees) if trees is not None else None
            if transcript is None:
                verdict = self.reviewer.review(case, tools)
            else:
                with TrajectoryWriter(transcript) as writer:
                    writer.event("start", task=task.id, reviewer=self.reviewer.name, mode=self.reviewer.mode)
                    verdict = self.reviewer.review(case, tools, writer)
        except EvalkitError as exc:  # the sandbox failed under the review (its engine went away)
            self._close_sandbox()
            self._task_id = None
            return ReviewVerdict(
                reviewer=self.reviewer.name, mode=self.reviewer.mode, score=None, error=f"review sandbox: {exc}"
            )
        return verdict if applied else verdict.model_copy(update={"candidate_applied": False})

    def _close_sandbox(self, keep_error: bool = False) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
        self._sandbox, self._trees = None, None
        if not keep_error:
            self._sandbox_error = None

    def close(self) -> None:
        self._close_sandbox()

    def __enter__(self) -> ReviewSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
