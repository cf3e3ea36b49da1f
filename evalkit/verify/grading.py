"""Grade per-test outcomes against a task's FAIL_TO_PASS and PASS_TO_PASS lists (pure, no Docker).

Avoids two traps of SWE-bench's grading: a skipped FAIL_TO_PASS test is not a pass, and a test
run that produced no report resolves nothing.

SWE-bench's ids are read from pytest's `-rA` summary lines, split at whitespace: a parametrised
id with a space (`test_unparse[a + b-a + b]`) is listed as `test_unparse[a`. Such a listed id
that no test has exactly stands for every test whose id it begins up to that first space; it
passes when all of them passed (SWE-bench keeps whichever line came last, which depends on order).
"""

from __future__ import annotations

from pydantic import BaseModel

from evalkit.records import TestGroupResult
from evalkit.verify.junit import TestStatus


class Grade(BaseModel):
    """The verdict on one test run."""

    resolved: bool
    fail_to_pass: TestGroupResult
    pass_to_pass: TestGroupResult
    statuses: dict[str, TestStatus]  # every listed test's status


def swebench_key(test_id: str) -> str:
    """The id as SWE-bench's log parser keys it: up to the first whitespace."""
    return test_id.split(maxsplit=1)[0] if test_id.strip() else test_id


def _by_key(outcomes: dict[str, TestStatus]) -> dict[str, list[TestStatus]]:
    cut: dict[str, list[TestStatus]] = {}
    for test_id, status in outcomes.items():
        key = swebench_key(test_id)
        if key != test_id:
            cut.setdefault(key, []).append(status)
    return cut


def _status(test_id: str, outcomes: dict[str, TestStatus], cut: dict[str, list[TestStatus]]) -> TestStatus:
    if test_id in outcomes:
        return outcomes[test_id]
    statuses = cut.get(test_id)
    if not statuses:
        return TestStatus.MISSING
    failing = [status for status in statuses if status != TestStatus.PASSED]
    return failing[0] if failing else TestStatus.PASSED


def grade(fail_to_pass: list[str], pass_to_pass: list[str], outcomes: dict[str, TestStatus] | None) -> Grade:
    """Resolved when every listed test passed; a listed test that is missing, skipped or errored
    counts as failed, and `outcomes=None` (no report at all) resolves nothing."""
    outcomes = outcomes or {}
    cut = _by_key(outcomes)
    statuses: dict[str, TestStatus] = {}
    groups = []
    for listed in (fail_to_pass, pass_to_pass):
        passed, failed = [], []
        for test_id in listed:
            status = _status(test_id, outcomes, cut)
            statuses[test_id] = status
            (passed if status == TestStatus.PASSED else failed).append(test_id)
        groups.append(TestGroupResult(passed=passed, failed=failed))
    f2p, p2p = groups
    resolved = bool(fail_to_pass) and not f2p.failed and not p2p.failed
    return Grade(resolved=resolved, fail_to_pass=f2p, pass_to_pass=p2p, statuses=statuses)
