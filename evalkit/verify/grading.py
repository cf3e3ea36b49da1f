"""Grade per-test outcomes against a task's FAIL_TO_PASS and PASS_TO_PASS lists (pure, no Docker).

Avoids two traps of SWE-bench's grading: a skipped FAIL_TO_PASS test is not a pass, and a test
run that produced no report resolves nothing.
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


def grade(fail_to_pass: list[str], pass_to_pass: list[str], outcomes: dict[str, TestStatus] | None) -> Grade:
    """Resolved when every listed test passed; a listed test that is missing, skipped or errored
    counts as failed, and `outcomes=None` (no report at all) resolves nothing."""
    outcomes = outcomes or {}
    statuses: dict[str, TestStatus] = {}
    groups = []
    for listed in (fail_to_pass, pass_to_pass):
        passed, failed = [], []
        for test_id in listed:
            status = outcomes.get(test_id, TestStatus.MISSING)
            statuses[test_id] = status
            (passed if status == TestStatus.PASSED else failed).append(test_id)
        groups.append(TestGroupResult(passed=passed, failed=failed))
    f2p, p2p = groups
    resolved = bool(fail_to_pass) and not f2p.failed and not p2p.failed
    return Grade(resolved=resolved, fail_to_pass=f2p, pass_to_pass=p2p, statuses=statuses)
