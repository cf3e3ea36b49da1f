"""Task health: a task is valid when its reference change resolves it every time, the empty
change does not, and no listed test flips between identical runs."""

from __future__ import annotations

import time

from pydantic import BaseModel, Field

from evalkit.errors import EvalkitError
from evalkit.sandbox.protocol import SandboxBackend, SandboxRequest
from evalkit.tasks.model import Task
from evalkit.verify.correctness import SCORE_ROLE, CorrectnessResult, evaluate_patch, first_error_line
from evalkit.verify.junit import TestStatus


class TaskHealth(BaseModel):
    """The validation verdict on one task, with the reasons when it is not valid."""

    task_id: str
    valid: bool
    gold_resolved: bool  # the reference change resolved on every run
    gold_runs: list[bool]
    empty_resolved: bool
    flaky: bool
    flaky_tests: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    fail_to_pass: int
    pass_to_pass: int
    duration_s: float
    # names the hidden tests need that neither prompt nor interface gives (set by gather): a flag,
    # not a failure, since the tests still judge the reference change correctly
    underspecified: list[str] = Field(default_factory=list)


def _flaky_tests(runs: list[CorrectnessResult]) -> list[str]:
    seen: dict[str, set[TestStatus]] = {}
    for run in runs:
        for test_id, status in run.statuses.items():
            seen.setdefault(test_id, set()).add(status)
    return sorted(t for t, statuses in seen.items() if len(statuses) > 1)


def assess_health(task: Task, gold: list[CorrectnessResult], empty: CorrectnessResult, duration_s: float) -> TaskHealth:
    """Turn the gold and empty runs into a verdict (pure)."""
    problems: list[str] = []
    for run in [*gold, empty]:
        if run.error:
            problems.append(run.error)
    if any(not run.patch_applied for run in gold):
        problems.append("the reference patch does not apply")
    failing_gold = sorted({t for run in gold for t in run.fail_to_pass.failed + run.pass_to_pass.failed})
    if failing_gold:
        said = next(first_error_line(run.log) for run in gold if run.fail_to_pass.failed or run.pass_to_pass.failed)
        problems.append(f"with the reference patch these fail: {', '.join(failing_gold[:5])} (first error: {said})")
    if empty.fail_to_pass.passed:
        problems.append(f"FAIL_TO_PASS tests pass without any change: {', '.join(empty.fail_to_pass.passed[:5])}")
    if empty.pass_to_pass.failed:
        problems.append(f"PASS_TO_PASS tests fail on the base: {', '.join(empty.pass_to_pass.failed[:5])}")
    flaky_tests = _flaky_tests(gold)
    if flaky_tests:
        problems.append(f"flaky: {', '.join(flaky_tests[:5])} changed outcome between identical runs")
    # an environment that cannot run the tests, or a sandbox that never opened (a failed build, a
    # missing repository): nothing else about the task can be judged, so nothing else is said
    blocking = [run.error for run in [*gold, empty] if run.error and (run.environment_error or not run.patch_applied)]
    if blocking:
        problems = blocking
    gold_runs = [run.resolved for run in gold]
    gold_resolved = all(gold_runs)
    return TaskHealth(
        task_id=task.id,
        valid=gold_resolved and not empty.resolved and not problems,
        gold_resolved=gold_resolved,
        gold_runs=gold_runs,
        empty_resolved=empty.resolved,
        flaky=bool(flaky_tests) or len(set(gold_runs)) > 1,
        flaky_tests=flaky_tests,
        problems=list(dict.fromkeys(problems)),
        fail_to_pass=len(task.tests.fail_to_pass),
        pass_to_pass=len(task.tests.pass_to_pass),
        duration_s=round(duration_s, 2),
        underspecified=task.underspecified,
    )


def validation_sandboxes(task: Task, gold_runs: int = 3) -> list[SandboxRequest]:
    """The sandboxes `validate_task` opens, for `SandboxBackend.prepare`."""
    return [SandboxRequest(task, SCORE_ROLE) for _ in range(gold_runs + 1)]


def validate_task(task: Task, backend: SandboxBackend, gold_runs: int = 3) -> TaskHealth:
    """Score the reference patch `gold_runs` times and the empty patch once."""
    started = time.monotonic()
    try:
        empty = evaluate_patch(task, "", backend)
        if empty.environment_error:  # the reference cannot be judged either: not run three times for nothing
            return assess_health(task, [empty], empty, time.monotonic() - started)
        gold = [evaluate_patch(task, task.patch, backend) for _ in range(gold_runs)]
    except EvalkitError as exc:
        return failed_health(task, str(exc), time.monotonic() - started)
    return assess_health(task, gold, empty, time.monotonic() - started)


def failed_health(task: Task, error: str, duration_s: float = 0.0) -> TaskHealth:
    """The verdict on a task whose validation could not run (`error` says why, in one line)."""
    failed = CorrectnessResult(task_id=task.id, error=error)
    return assess_health(task, [failed], failed, duration_s)
