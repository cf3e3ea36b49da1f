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
    `file`, what follows it are the test classes. `file` is where the function is *defined*: a test
    a class of another module inherits (pyflakes' test_doctests.py runs test_imports.py's methods)
    has a `classname` of the module that runs it, whose trailing capitalised parts are classes."""
    module = file[:-3].replace("/", ".") if file and file.endswith(".py") else file
    if file and module and (classname == module or classname.startswith(module + ".")):
        classes = classname[len(module) :].strip(".")
        return "::".join([file, *[c for c in classes.split(".") if c], name])
    parts = classname.split(".")
    split = len(parts)
    while split > 1 and parts[split - 1][:1].isupper():
        split -= 1
    if split == len(parts) and not file:  # no class named: the last part is taken for one, as before
        split -= 1
    if split == 0 or split == len(parts):
        return "::".join([file or classname, name])
    return "/".join(parts[:split]) + ".py::" + "::".join([*parts[split:], name])


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
