"""Per-test outcomes from pytest's JUnit XML, keyed by pytest node id (`tests/test_x.py::Class::test`)."""

from __future__ import annotations

from enum import StrEnum

from junitparser import Error, Failure, JUnitXml, Skipped


class TestStatus(StrEnum):
    __test__ = False  # not a pytest class

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    MISSING = "missing"  # listed by the task, absent from the report


def _node_id(file: str | None, classname: str, name: str) -> str:
    """Rebuild a pytest node id from xunit1 attributes: the module part of `classname` maps to
    `file`, what follows it are the test classes."""
    if not file:
        parts = classname.split(".")
        return "/".join(parts[:-1]) + f".py::{parts[-1]}::{name}" if len(parts) > 1 else f"{classname}::{name}"
    module = file[:-3].replace("/", ".") if file.endswith(".py") else file
    classes = classname[len(module) :].strip(".") if classname.startswith(module) else ""
    return "::".join([file, *[c for c in classes.split(".") if c], name])


def parse_junit(xml_text: str) -> dict[str, TestStatus]:
    """Map each test case in a JUnit XML report (pytest, `junit_family=xunit1`) to its status.

    A test reported twice (e.g. a failing teardown after a pass) keeps the worse status.
    """
    report = JUnitXml.fromstring(xml_text)
    suites = [report] if report._tag == "testsuite" else list(report)
    rank = {TestStatus.PASSED: 0, TestStatus.SKIPPED: 1, TestStatus.FAILED: 2, TestStatus.ERROR: 3}
    outcomes: dict[str, TestStatus] = {}
    for suite in suites:
        for case in suite:
            node = _node_id(case._elem.get("file"), case.classname or "", case.name or "")
            kinds = {type(r) for r in case.result}
            if Error in kinds:
                status = TestStatus.ERROR
            elif Failure in kinds:
                status = TestStatus.FAILED
            elif Skipped in kinds:
                status = TestStatus.SKIPPED
            else:
                status = TestStatus.PASSED
            if node not in outcomes or rank[status] > rank[outcomes[node]]:
                outcomes[node] = status
    return outcomes
