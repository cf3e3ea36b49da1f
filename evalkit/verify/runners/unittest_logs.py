"""Per-test outcomes from unittest's verbose log (`-v`, Django's `--verbosity 2`), keyed as
SWE-bench keys them: `test_x (module.Class)`, or a test's docstring line when it has one.

Python 3.11 changed the id unittest prints to `test_x (module.Class.test_x)`; `align_ids` lets
either form of a listed id find the other.
"""

from __future__ import annotations

import re

from evalkit.verify.junit import TestStatus

# `name (dotted.path)`: the id unittest prints; 3.11+ ends the path with the name again
TEST_ID = re.compile(r"^(?P<name>\w+) \((?P<path>[\w.]+)\)$")
_STATUSES = {
    "ok": TestStatus.PASSED,
    "OK": TestStatus.PASSED,
    "FAIL": TestStatus.FAILED,
    "ERROR": TestStatus.ERROR,
    "expected failure": TestStatus.PASSED,  # unittest counts it a success
    "unexpected success": TestStatus.FAILED,
}
_SUMMARY = re.compile(r"^(?P<status>FAIL|ERROR): (?P<id>\w+ \([\w.]+\))")


def short_id(test_id: str) -> str:
    """`test_x (module.Class.test_x)` (Python 3.11+) as `test_x (module.Class)`; other ids unchanged."""
    found = TEST_ID.match(test_id)
    if found and found["path"].endswith("." + found["name"]):
        return f"{found['name']} ({found['path'][: -len(found['name']) - 1]})"
    return test_id


def align_ids(outcomes: dict[str, TestStatus], listed: list[str]) -> dict[str, TestStatus]:
    """`outcomes` plus, for each listed id the log wrote in the other Python's form, the outcome
    under the listed id (so `test_x (m.C)` finds `test_x (m.C.test_x)` and the reverse)."""
    by_short = {short_id(k): v for k, v in outcomes.items()}
    aligned = dict(outcomes)
    for test_id in listed:
        if test_id not in aligned and short_id(test_id) in by_short:
            aligned[test_id] = by_short[short_id(test_id)]
    return aligned


def parse_unittest_log(log: str) -> dict[str, TestStatus]:
    """Outcomes from `python -m unittest -v` output, ids `test_x (module.Class)`.

    A test with a docstring prints its id on one line and `docstring ... ok` on the next; output
    the test wrote may split `id ... ` from its status, which then starts a later line."""
    outcomes: dict[str, TestStatus] = {}
    pending: str | None = None  # a test whose status has not been printed yet
    for raw in log.splitlines():
        line = raw.strip()
        if TEST_ID.match(line):
            pending = short_id(line)
        elif summary := _SUMMARY.match(line):  # the failure sections at the end name the test again
            test_id = short_id(summary["id"])
            if outcomes.get(test_id) not in (TestStatus.FAILED, TestStatus.ERROR):
                outcomes[test_id] = _STATUSES[summary["status"]]
        elif " ... " in line:
            head, _, tail = line.partition(" ... ")
            test_id = short_id(head) if TEST_ID.match(head) else pending
            status = _status(tail.strip())
            if test_id is not None and status is not None:
                outcomes[test_id] = status
            pending = test_id if status is None else None
        elif pending is not None and (status := _status(line.split(" ", 1)[0])) is not None:
            outcomes[pending] = status
            pending = None
    return outcomes


def _status(text: str) -> TestStatus | None:
    if text.startswith("skipped"):
        return TestStatus.SKIPPED
    return _STATUSES.get(text)


# -- Django: SWE-bench's parse_log_django, quirks and all, so its ids match -----------------------
_DJANGO_PASSED = (" ... ok", " ... OK", " ...  OK")
_DJANGO_VERSION_TEST = "--version is equivalent to version"  # its output spans lines; SWE-bench lists it by this text
_DJANGO_MIGRATION_NOISE = "Applying sites.0002_alter_domain_unique...test_no_migrations"  # django__django-7188
# a test whose `... ok` a long message split across lines
_DJANGO_INTERRUPTED = (
    re.compile(r"^(.*?)\s\.\.\.\sTesting\ against\ Django\ installed\ in\ ((?s:.*?))\ silenced\)\.\nok$", re.MULTILINE),
    re.compile(r"^(.*?)\s\.\.\.\sInternal\ Server\ Error:\ \/(.*)\/\nok$", re.MULTILINE),
    re.compile(r"^(.*?)\s\.\.\.\sSystem check identified no issues \(0 silenced\)\nok$", re.MULTILINE),
)


def parse_django_log(log: str) -> dict[str, TestStatus]:
    """Outcomes from `tests/runtests.py --verbosity 2` output, keyed exactly as SWE-bench's
    `parse_log_django` keys them: the text before ` ... ` (an id, or a docstring's first line), a
    lone `ok` line passing the last test that printed ` ... `, and its three known interruptions."""
    outcomes: dict[str, TestStatus] = {}
    last_started: str | None = None
    for raw in log.split("\n"):
        line = raw.strip()
        if _DJANGO_VERSION_TEST in line:
            outcomes[_DJANGO_VERSION_TEST] = TestStatus.PASSED
        if " ... " in line:
            last_started = line.split(" ... ")[0]
        passed = next((s for s in _DJANGO_PASSED if line.endswith(s)), None)
        if passed:
            if line.startswith(_DJANGO_MIGRATION_NOISE):
                line = line.split("...", 1)[-1].strip()
            outcomes[line.rsplit(passed, 1)[0]] = TestStatus.PASSED
        if " ... skipped" in line:
            outcomes[line.split(" ... skipped")[0]] = TestStatus.SKIPPED
        for word, status in (("FAIL", TestStatus.FAILED), ("ERROR", TestStatus.ERROR)):
            if line.endswith(f" ... {word}"):
                outcomes[line.split(f" ... {word}")[0]] = status
            if line.startswith(f"{word}:") and len(line.split()) > 1:  # SWE-bench keeps the word after `FAIL:`
                outcomes[line.split()[1].strip()] = status
        if line.startswith("ok") and last_started is not None:  # `... <output>` then `ok` later
            outcomes[last_started] = TestStatus.PASSED
    for pattern in _DJANGO_INTERRUPTED:
        for found in pattern.finditer(log):
            outcomes[found.group(1)] = TestStatus.PASSED
    return outcomes
