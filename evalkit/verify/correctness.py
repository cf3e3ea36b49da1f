"""Correctness: apply a candidate diff and the hidden tests in a fresh sandbox, run, and grade.

Order matters: the candidate diff first (git apply, then `--reject`, then `patch --fuzz`), then
whatever in it could steer the test runner is put back (`guarded_run.neutralise`: test files, conftest
files, runner settings, start-up hooks), then the files of the hidden `test_patch` are reset to the
base and the test patch applied, then the tests run through the task's runner (`runners`: pytest
or tox under evalkit's guard plugin, whose report is checked against the JUnit file; Django or
unittest read from their logs). SWE-bench's harness applies the candidate whole and trusts the
run; here the candidate cannot decide the verdict, and every attempt to is recorded as an
integrity flag (for the log runners, as far as putting back its steering files goes).
"""

from __future__ import annotations

import re
import shlex
import time

from pydantic import BaseModel, Field

from evalkit.diffs import APPLY_METHODS, GIT_APPLY, changed_paths
from evalkit.integrity import IntegrityFlag
from evalkit.records import TestGroupResult
from evalkit.sandbox.protocol import Sandbox, SandboxBackend
from evalkit.tasks.model import Task
from evalkit.verify.collector import await_collector, launch_collector
from evalkit.verify.grading import Grade, grade
from evalkit.verify.guarded_run import (
    SCRATCH,
    changed_in_sandbox,
    neutralise,
    plant_canaries,
    prepare_run,
    steering_flags,
    write_watch,
)
from evalkit.verify.junit import TestStatus
from evalkit.verify.runner_steering import RestoredChange
from evalkit.verify.runners import runner_for
from evalkit.verify.runners.pytest_runners import listed_test_files
from evalkit.wording import without_colour

LOG_LIMIT = 200_000
SCORE_ROLE = "score"  # the `evalkit.role` of scoring sandboxes


class CorrectnessResult(BaseModel):
    """Everything the correctness check observed for one candidate diff."""

    task_id: str
    resolved: bool = False
    patch_empty: bool = False
    patch_applied: bool = False
    apply_method: str | None = None
    tests_ran: bool = False
    fail_to_pass: TestGroupResult = Field(default_factory=lambda: TestGroupResult(passed=[], failed=[]))
    pass_to_pass: TestGroupResult = Field(default_factory=lambda: TestGroupResult(passed=[], failed=[]))
    statuses: dict[str, TestStatus] = Field(default_factory=dict)  # the listed tests
    outcomes: dict[str, TestStatus] = Field(default_factory=dict)  # every test the report holds
    restored: list[RestoredChange] = Field(default_factory=list)  # candidate parts put back before the tests
    integrity_flags: list[IntegrityFlag] = Field(default_factory=list)  # what the test run showed
    error: str | None = None  # a harness or task problem, as opposed to a wrong answer
    environment_error: bool = False  # the hidden tests do not run here even without a change: `error` says why
    guarded: bool = True  # evalkit's guard plugin watched the run; False: outcomes read from the runner's log
    durations: dict[str, float] = Field(default_factory=dict)
    log: str = ""

    def with_grade(self, verdict: Grade) -> CorrectnessResult:
        return self.model_copy(
            update={
                "resolved": verdict.resolved,
                "fail_to_pass": verdict.fail_to_pass,
                "pass_to_pass": verdict.pass_to_pass,
                "statuses": verdict.statuses,
            }
        )


def apply_candidate(sandbox: Sandbox, patch: str, log: list[str]) -> str | None:
    """Apply `patch` with the first method that works; return its name, or None."""
    path = f"{SCRATCH}/candidate.patch"
    sandbox.write_file(path, patch if patch.endswith("\n") else patch + "\n")
    for method in APPLY_METHODS:
        result = sandbox.exec(method.shell(path), timeout=120)
        log.append(f"$ {method.name}\n{result.stdout}{result.stderr}")
        if result.ok:
            return method.name
        sandbox.exec("git reset --hard --quiet && git clean -fdq", timeout=120)
    return None


def apply_hidden_tests(sandbox: Sandbox, task: Task, base_commit: str, log: list[str]) -> str | None:
    """Reset the test patch's files to the base, then apply it; return an error or None."""
    resets = " ; ".join(
        f"(git checkout {base_commit} -- {shlex.quote(p)} 2>/dev/null || rm -f -- {shlex.quote(p)})"
        for p in changed_paths(task.test_patch)
    )
    if resets:
        sandbox.exec(resets, timeout=120)
    path = f"{SCRATCH}/hidden_tests.patch"
    sandbox.write_file(path, task.test_patch)
    result = sandbox.exec(GIT_APPLY.shell(path), timeout=120)
    log.append(f"$ apply hidden tests\n{result.stdout}{result.stderr}")
    return None if result.ok else f"the task's test_patch does not apply: {result.stderr.strip()[:200]}"


# most telling first: pytest's `E   ModuleNotFoundError: ...`, then any `XError: ...`, then `ERROR ...`
_FAILING_LINES = (
    re.compile(r"^E\s+(\w*(?:Error|Exception)\b:.*)$", re.MULTILINE),
    re.compile(r"^\s*([\w.]*(?:Error|Exception)\b.*)$", re.MULTILINE),  # pluggy._manager.PluginValidationError
    re.compile(r"^(ERROR\b.*)$", re.MULTILINE),
)


def first_failing_line(log: str) -> str:
    """The line of a test run's output that says best why it failed (`ModuleNotFoundError: No
    module named 'docutils'`), else its last line: what a person reads first to fix an environment.
    Colour codes go first: sphinx's tox.ini runs pytest with `--color yes`."""
    log = without_colour(log)
    for pattern in _FAILING_LINES:
        if found := pattern.search(log):
            return found.group(1).strip()[:300]
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


_ASSERTION_LINE = re.compile(r"^E\s+(\S.*)$", re.MULTILINE)


def first_error_line(log: str) -> str:
    """The first line pytest marked `E` (what the first failing test said), else the line
    `first_failing_line` finds: why a change's tests fail, in one line."""
    found = _ASSERTION_LINE.search(without_colour(log))
    return found.group(1).strip()[:300] if found else first_failing_line(log)


def _blame(task: Task, result: CorrectnessResult, backend: SandboxBackend) -> CorrectnessResult:
    """The tests left no report: either the candidate stopped the run (a wrong answer) or the
    environment cannot run them at all (an error, never a score). The base tree with the hidden
    tests tells which; an empty candidate is that probe already."""
    probe = result if result.patch_empty else evaluate_patch(task, "", backend)
    if probe.tests_ran:
        return result
    if probe.environment_error:  # the probe's own verdict, already worded
        return result.model_copy(update={"environment_error": True, "error": probe.error})
    said = probe.error or first_failing_line(probe.log)
    return result.model_copy(
        update={"environment_error": True, "error": f"the tests do not run here, even without a change: {said}"}
    )


def evaluate_patch(task: Task, patch: str, backend: SandboxBackend) -> CorrectnessResult:
    """Score one candidate diff for `task` in a fresh, network-less sandbox."""
    started = time.monotonic()
    nothing_ran = grade(task.tests.fail_to_pass, task.tests.pass_to_pass, None)
    result = CorrectnessResult(task_id=task.id, patch_empty=not patch.strip()).with_grade(nothing_ran)
    log: list[str] = []
    timings: dict[str, float] = {}
    with backend.open(task, role=SCORE_ROLE) as sandbox:
        timings["setup"] = time.monotonic() - started
        mark = time.monotonic()
        if result.patch_empty:
            result.patch_applied = True
        else:
            result.apply_method = apply_candidate(sandbox, patch, log)
            result.patch_applied = result.apply_method is not None
        timings["apply"] = time.monotonic() - mark
        if not result.patch_applied:
            log.append("candidate patch does not apply: tests not run")
        else:
            result.restored = neutralise(sandbox, task, sandbox.base_commit)
            kept = changed_in_sandbox(sandbox, sandbox.base_commit)
            result.error = apply_hidden_tests(sandbox, task, sandbox.base_commit, log)
            if result.error is None:
                mark = time.monotonic()
                runner = runner_for(task.tests.framework)
                run = prepare_run(sandbox)
                if runner.guarded:
                    collector = launch_collector(sandbox)
                    plant_canaries(sandbox, task, run, listed_test_files(task))
                    write_watch(sandbox, task, run, listed_test_files(task), kept)
                    run.collector = await_collector(sandbox, collector)
                command = runner.command(task, run)
                executed = sandbox.exec(command, timeout=task.tests.timeout_s, output_limit=runner.output_limit)
                sandbox.kill_all()  # nothing the code under test left running may touch the reports now
                timings["tests"] = time.monotonic() - mark
                output = executed.stdout + executed.stderr
                log.append(f"$ {command}  (exit {executed.exit_code})\n{output}")
                report = runner.collect(sandbox, task, run, output, kept)
                log.extend(report.notes)
                result.error = report.error
                result.guarded = runner.guarded
                result.tests_ran = bool(report.outcomes)
                result = result.with_grade(grade(task.tests.fail_to_pass, task.tests.pass_to_pass, report.outcomes))
                result.outcomes = report.outcomes or {}
                result.integrity_flags = report.flags
            result.integrity_flags = [*steering_flags(result.restored), *result.integrity_flags]
    timings["total"] = time.monotonic() - started
    result.durations = {k: round(v, 3) for k, v in timings.items()}
    result.log = "\n".join(log)[-LOG_LIMIT:]
    if result.patch_applied and not result.tests_ran and result.error is None:
        result = _blame(task, result, backend)
    return result
