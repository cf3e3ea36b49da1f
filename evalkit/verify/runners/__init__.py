"""Test runners by framework (`TestSpec.framework`): how the hidden tests' command is completed in
the scoring sandbox and how per-test outcomes are read back, keyed by the ids the task lists.

- `pytest`: the task's command with evalkit's guard plugin and a JUnit report (`pytest_runners`).
- `tox`: the same pytest arguments after tox's `--` (`tox --current-env -epy39 -v --`, as
  SWE-bench runs sphinx), with the guard's variables let through tox's variable filter (pass_env).
- `django`: `tests/runtests.py --verbosity 2 ... <labels>`, outcomes parsed from its verbose log
  as SWE-bench's `parse_log_django` does, ids `test_x (module.Class)` (`log_runners`).
- `unittest`: `python -m unittest -v <modules>`, outcomes parsed from its verbose log.

The two log runners cannot load the guard plugin (it is a pytest plugin): `guarded` is False, the
run gets no guard flags, and the outcomes are what the log says, as in SWE-bench's harness. The
candidate's steering files are still put back before the run (`guarded_run.neutralise`).

Adding a runner is one row in `RUNNERS` and a framework name in `tasks.model.Framework`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from evalkit.lazy_table import Table, load

if TYPE_CHECKING:
    from evalkit.integrity import IntegrityFlag
    from evalkit.sandbox.protocol import Sandbox
    from evalkit.tasks.model import Task
    from evalkit.verify.guarded_run import GuardedRun
    from evalkit.verify.junit import TestStatus

RUNNERS: Table = {
    "pytest": ("evalkit.verify.runners.pytest_runners", "PYTEST"),
    "tox": ("evalkit.verify.runners.pytest_runners", "TOX"),
    "django": ("evalkit.verify.runners.log_runners", "DJANGO"),
    "unittest": ("evalkit.verify.runners.log_runners", "UNITTEST"),
}


@dataclass
class RunnerReport:
    """What one test run showed: outcomes by test id (None: no test ran, or no report), the
    tampering the guard saw, lines for the log, and a task error when the run says whose fault."""

    outcomes: dict[str, TestStatus] | None
    flags: list[IntegrityFlag] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    error: str | None = None


class TestRunner(Protocol):
    """Completes a task's test command and reads back per-test outcomes."""

    __test__ = False  # not a pytest class
    guarded: bool  # evalkit's guard plugin watches the run (pytest-based runners only)
    output_limit: int  # bytes of each output stream kept for `collect` (head and tail)

    def command(self, task: Task, run: GuardedRun) -> str:
        """The shell command that runs `task`'s listed tests in the sandbox."""
        ...

    def collect(self, sandbox: Sandbox, task: Task, run: GuardedRun, output: str, kept: dict[str, str]) -> RunnerReport:
        """Outcomes of the run whose combined output is `output`; `kept`: the candidate's paths
        left in place (path → git status letter)."""
        ...


def runner_for(framework: str) -> TestRunner:
    """The runner of `framework` (a `TestSpec.framework` value); an unknown name is one line."""
    return load(RUNNERS, framework, "test framework")
