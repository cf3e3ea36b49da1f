"""Runners whose outcomes are read from the verbose log: Django's `tests/runtests.py` and plain
`python -m unittest -v`. Neither can load evalkit's guard plugin (a pytest plugin), so the log is
trusted as SWE-bench's harness trusts it: `guarded` is False and no guard flag is raised."""

from __future__ import annotations

import posixpath
import shlex
from collections.abc import Callable
from dataclasses import dataclass

from evalkit.diffs import changed_paths
from evalkit.sandbox.protocol import Sandbox
from evalkit.tasks.model import Task
from evalkit.verify.guarded_run import CLEAN_VARIABLES, GuardedRun
from evalkit.verify.junit import TestStatus
from evalkit.verify.runners import RunnerReport
from evalkit.verify.runners.unittest_logs import TEST_ID, align_ids, parse_django_log, parse_unittest_log, short_id

# enough for a few thousand verbose test lines; the head and tail are kept past it
LOG_OUTPUT_LIMIT = 8 * 1024 * 1024
# files of a test patch that are data, not test modules (SWE-bench's NON_TEST_EXTS)
NON_TEST_EXTENSIONS = (".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml")
NO_TESTS_IN_LOG = "no test outcome in the log: the test run crashed before any test ran"


def django_labels(task: Task) -> list[str]:
    """The test modules SWE-bench runs for a Django task: the test patch's test files as dotted
    modules, without `tests/` and `.py` (`tests/auth_tests/test_forms.py` → `auth_tests.test_forms`)."""
    labels = []
    for path in changed_paths(task.test_patch):
        name = posixpath.basename(path)
        if path.endswith(NON_TEST_EXTENSIONS):
            continue
        if not (name == "tests.py" or name.startswith("test_") or "/tests/" in path or "/test_" in path):
            continue
        label = path.removesuffix(".py").removeprefix("tests/").replace("/", ".")
        labels.append(label)
    return list(dict.fromkeys(labels))


def unittest_labels(task: Task) -> list[str]:
    """The modules of the listed tests (`test_x (pkg.mod.Class)` → `pkg.mod`); none when no listed
    id names its class (unittest then discovers the tests itself)."""
    modules = []
    for test_id in task.tests.fail_to_pass + task.tests.pass_to_pass:
        found = TEST_ID.match(short_id(test_id))
        if found and "." in found["path"]:
            modules.append(found["path"].rsplit(".", 1)[0])
    return sorted(set(modules))


@dataclass(frozen=True)
class LogRunner:
    """The task's command with its labels appended, both output streams in one log, parsed."""

    labels: Callable[[Task], list[str]]
    parse: Callable[[str], dict[str, TestStatus]]
    guarded: bool = False
    output_limit: int = LOG_OUTPUT_LIMIT

    def command(self, task: Task, run: GuardedRun) -> str:
        words = " ".join([task.tests.command, *map(shlex.quote, self.labels(task))])
        return f"{CLEAN_VARIABLES}; {{ {words} ; }} 2>&1"

    def collect(self, sandbox: Sandbox, task: Task, run: GuardedRun, output: str, kept: dict[str, str]) -> RunnerReport:
        parsed = self.parse(output)
        if not parsed:
            return RunnerReport(outcomes=None, notes=[NO_TESTS_IN_LOG])
        listed = task.tests.fail_to_pass + task.tests.pass_to_pass
        return RunnerReport(outcomes=align_ids(parsed, listed), notes=["outcomes read from the log (no guard plugin)"])


DJANGO = LogRunner(labels=django_labels, parse=parse_django_log)
UNITTEST = LogRunner(labels=unittest_labels, parse=parse_unittest_log)
