"""Validating a candidate in the sandbox: the tests of its test part run on the base with the test
part only (must fail) and with both parts (must pass), each `runs` times.

FAIL_TO_PASS = tests failing on every run before and passing on every run after; PASS_TO_PASS =
tests passing on every run before and after (sampled to a cap so scoring stays fast); a test
whose outcome changes between identical runs is flaky and dropped from both. The same scorer
(`evaluate_patch`) runs here and when agents are scored, so a gathered task validates the same
way later.

A test function parametrised thousands of ways (seen: 18,000 and 51,000 ids) would make every
scoring of the task slow, so FAIL_TO_PASS keeps at most `per_function` ids of each test function
(`sample_per_function`: evenly spread over its sorted ids, the first and last included, the same
on every gather); the task's metadata records the full count.

A base run that cannot load the tests because they import what the change adds is their expected
before state, not a broken environment (new_tests.py). Every reason to reject is one line, with
the first error line of the failing run.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from evalkit.gather.history import DEFAULT_PYTHON_FILES, test_modules
from evalkit.gather.new_tests import tests_are_new
from evalkit.gather.sampling import MAX_IDS_PER_FUNCTION, sample_per_function
from evalkit.gather.stable_ids import position_dependent
from evalkit.sandbox.protocol import SandboxBackend
from evalkit.tasks.model import Task, TestSpec
from evalkit.verify.correctness import CorrectnessResult, evaluate_patch, first_failing_line
from evalkit.verify.junit import TestStatus


@dataclass
class CandidateTests:
    """The FAIL_TO_PASS and PASS_TO_PASS lists a candidate commit gets, the tests left out of them,
    and why the candidate is rejected (None when kept)."""

    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # failing with the change: left out of both lists
    fail_to_pass_total: int = 0  # before the per-function sample
    reason: str | None = None  # why the candidate is rejected, None when kept
    node: str | None = None  # the cluster node that ran the tests (None: this machine)
    # "ran": the environment ran the repository's tests (one passed, before or after the change);
    # "failed": no test passed in any run (the image, the install or the collection failed)
    environment: str = ""
    output: str = ""  # a rejected candidate's failing run (error and log, cut): what the repair reads
    failed_before: list[str] = field(default_factory=list)  # FAIL_TO_PASS tests that ran and failed on the base
    position_dependent: list[str] = field(default_factory=list)  # ids naming source lines: in neither list

    def positions_said(self) -> str:
        """For the task's metadata: how many ids named source positions, and a few of them."""
        ids = self.position_dependent
        return f"{len(ids)}: {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''}"


def _stable(runs: list[CorrectnessResult]) -> tuple[dict[str, TestStatus], set[str]]:
    """Outcomes that agree on every run, and the tests that did not."""
    seen: dict[str, set[TestStatus]] = {}
    for run in runs:
        for test_id, status in run.outcomes.items():
            seen.setdefault(test_id, set()).add(status)
    for run in runs:
        for test_id in seen:
            if test_id not in run.outcomes:
                seen[test_id].add(TestStatus.MISSING)
    stable = {t: next(iter(s)) for t, s in seen.items() if len(s) == 1}
    return stable, {t for t, s in seen.items() if len(s) > 1}


def classify_tests(
    before: dict[str, TestStatus],
    after: dict[str, TestStatus],
    flaky: set[str],
    cap: int,
    seed: str,
    per_function: int = MAX_IDS_PER_FUNCTION,
    first_error: str = "",
    touched: frozenset[str] | None = None,
) -> CandidateTests:
    """Stable before/after outcomes split into the candidate's test lists (PASS_TO_PASS sampled to
    `cap`, FAIL_TO_PASS to `per_function` ids per test function), with the reason to reject it if
    any (pure). `first_error`: the first error line of the run with the change, for the reason.
    `touched`: the test part's modules; only their tests can be FAIL_TO_PASS (a neighbour module
    runs for PASS_TO_PASS, and one of its flaky tests that happened to fail before and pass after
    on every run would otherwise make a task of a change whose own tests already pass). Ids naming
    source positions (stable_ids.py) are in neither list: a correct change that moves lines renames them."""
    positional = sorted(t for t in after if position_dependent(t))
    positional_f2p = [t for t in positional if _fails_to_pass(t, before, after, touched)]
    after = {t: s for t, s in after.items() if t not in positional}
    f2p = sorted(t for t in after if _fails_to_pass(t, before, after, touched))
    p2p = sorted(t for t, s in after.items() if s == TestStatus.PASSED and before.get(t) == TestStatus.PASSED)
    broken = sorted(t for t, s in after.items() if s in (TestStatus.FAILED, TestStatus.ERROR))
    lists = CandidateTests(sample_per_function(f2p, per_function), p2p, sorted(flaky), broken, len(f2p))
    lists.failed_before = [t for t in lists.fail_to_pass if before.get(t) == TestStatus.FAILED]
    lists.position_dependent = positional
    if len(p2p) > cap:
        lists.pass_to_pass = sorted(random.Random(seed).sample(p2p, cap))
    said = f": {first_error}" if first_error else ""
    if not after and not positional:
        lists.reason = f"the tests did not run (no report): collection error or missing dependency{said}"
    elif not f2p and positional_f2p:
        lists.reason = f"FAIL_TO_PASS tests name source positions (line numbers): {', '.join(positional_f2p[:3])}"
    elif not f2p and broken:
        lists.reason = f"tests fail even with the change: {', '.join(broken[:3])}{said}"
    elif not f2p:
        lists.reason = "no FAIL_TO_PASS test: the new tests already pass before the change" + (
            f" (flaky: {', '.join(sorted(flaky)[:3])})" if flaky else ""
        )
    return lists


def _fails_to_pass(
    test: str, before: dict[str, TestStatus], after: dict[str, TestStatus], touched: frozenset[str] | None
) -> bool:
    """Passing with the change, not before, in a touched module (any module when `touched` is None)."""
    passes = after.get(test) == TestStatus.PASSED and before.get(test, TestStatus.MISSING) != TestStatus.PASSED
    return passes and (touched is None or test.split("::")[0] in touched)


def validate_candidate(
    provisional: Task,
    backend: SandboxBackend,
    runs: int,
    cap: int,
    neighbours: list[str] = (),
    per_function: int = MAX_IDS_PER_FUNCTION,
    patterns: tuple[str, ...] = DEFAULT_PYTHON_FILES,
    test_files: list[str] | None = None,
) -> CandidateTests:
    """Run the candidate's tests before and after `runs` times each and classify them. `neighbours`:
    existing test modules run as well, for PASS_TO_PASS tests that guard what the change must keep;
    `patterns`: the project's `python_files`; `test_files`: the modules to run, as screening found
    them (`Candidate.test_files`: the data's readers too), None for the test part's modules."""
    touched = list(test_files) if test_files else test_modules(provisional.test_patch, patterns)
    if not touched:
        return CandidateTests(reason="the test part leaves no test module to run")
    files = touched + [m for m in neighbours if m not in touched]
    spec = TestSpec(command=provisional.tests.command, fail_to_pass=files, timeout_s=provisional.tests.timeout_s)
    probe = provisional.model_copy(update={"tests": spec})
    before_runs = [evaluate_patch(probe, "", backend) for _ in range(runs)]
    after_runs = [evaluate_patch(probe, provisional.patch, backend) for _ in range(runs)]
    classified = _classified(provisional, before_runs, after_runs, cap, per_function, touched)
    applied = all(run.patch_applied for run in after_runs)  # else no evidence either way
    evidence = environment_evidence(before_runs + after_runs) if applied else ""
    output = failing_output(after_runs + before_runs) if classified.reason else ""
    return replace(classified, environment=evidence, output=output)


def failing_output(runs: list[CorrectnessResult], head: int = 3000, tail: int = 5000) -> str:
    """The error and the log of the first run that errored or failed a test, its start and end
    kept (a usage error is at the top, a traceback at the bottom)."""
    bad = (TestStatus.FAILED, TestStatus.ERROR)
    run = next((r for r in runs if r.error or not r.tests_ran or any(s in bad for s in r.outcomes.values())), None)
    if run is None:
        return ""
    text = f"{run.error or ''}\n{run.log or ''}"
    return text if len(text) <= head + tail else f"{text[:head]}\n[...]\n{text[-tail:]}"


def environment_evidence(runs: list[CorrectnessResult]) -> str:
    """ "ran" when some test passed in some run: the image, the install and the collection worked
    for the repository's own tests, whatever the verdict on the candidate; else "failed"."""
    passed = any(status == TestStatus.PASSED for run in runs for status in run.outcomes.values())
    return "ran" if passed else "failed"


def _classified(
    provisional: Task,
    before_runs: list[CorrectnessResult],
    after_runs: list[CorrectnessResult],
    cap: int,
    per_function: int,
    touched: list[str],
) -> CandidateTests:
    for run in after_runs:
        if run.error:
            return CandidateTests(reason=_reason(run))
        if not run.patch_applied:
            return CandidateTests(reason="the source part does not apply to the base")
    for run in before_runs:
        if run.error and not tests_are_new(f"{run.error}\n{run.log}", provisional.patch):
            return CandidateTests(reason=_reason(run))
    before_runs = [run for run in before_runs if not run.error]  # the rest: the tests are new
    before, flaky_before = _stable(before_runs)
    after, flaky_after = _stable(after_runs)
    flaky = flaky_before | flaky_after
    after = {t: s for t, s in after.items() if t not in flaky}
    bad = (TestStatus.FAILED, TestStatus.ERROR)
    failing = next((r for r in after_runs if not r.tests_ran or any(s in bad for s in r.outcomes.values())), None)
    first_error = first_failing_line(failing.log) if failing is not None else ""
    return classify_tests(before, after, flaky, cap, provisional.id, per_function, first_error, frozenset(touched))


def _reason(run: CorrectnessResult) -> str:
    """A failed run's error on one line, with the first error line of its output when the error
    does not already say it."""
    said = first_failing_line(run.log)
    text = run.error or ""
    if said not in text and said != "no output":
        text = f"{text}: {said}"
    return " ".join(text.split())[:400]
