"""pytest, directly or behind tox: the guard plugin loaded with `-p`, outcomes from the JUnit
report checked against the guard's own as evalkit's collector received it (`collected_report`;
the guard's report file where the sandbox has no collector), by `guarded_run.check_run`."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from evalkit.integrity import IntegrityFlag
from evalkit.sandbox.protocol import Sandbox
from evalkit.tasks.model import Task
from evalkit.verify.collected_report import collected_guard, file_flags
from evalkit.verify.collector import read_evidence
from evalkit.verify.guarded_run import GuardedRun, check_run, guarded_command, read_guard
from evalkit.verify.junit import parse_junit
from evalkit.verify.runners import RunnerReport

LOG_LIMIT = 200_000
# tox 4 hands its commands only the variables its `pass_env` names; the guard needs these four.
# `--current-env` (tox-current-env) already passes every variable; without it this override does.
GUARD_VARIABLES = "PYTHONPATH,EVALKIT_GUARD_REPORT,EVALKIT_GUARD_WATCH,EVALKIT_GUARD_CHANNEL"
TOX_PASS_ENV = f"export TOX_OVERRIDE='testenv.pass_env+={GUARD_VARIABLES}'"
GUARD_NOT_LOADED = (
    "evalkit's guard plugin could not be loaded: does the test command replace PYTHONPATH? "
    "(write PYTHONPATH=...:$PYTHONPATH)"
)


def listed_test_files(task: Task) -> list[str]:
    """The files of the listed tests (pytest node ids): the test run is limited to them."""
    return sorted({t.split("::")[0] for t in task.tests.fail_to_pass + task.tests.pass_to_pass})


@dataclass(frozen=True)
class PytestRunner:
    """The task's pytest command, guarded; `prelude`: shell run before it (tox's override)."""

    prelude: str = ""
    guarded: bool = True
    output_limit: int = LOG_LIMIT

    def command(self, task: Task, run: GuardedRun) -> str:
        command = guarded_command(task.tests.command, run, listed_test_files(task))
        return f"{self.prelude}; {command}" if self.prelude else command

    def collect(self, sandbox: Sandbox, task: Task, run: GuardedRun, output: str, kept: dict[str, str]) -> RunnerReport:
        report = RunnerReport(outcomes=None)
        junit, junit_sha256 = None, None
        try:
            text = sandbox.read_file(run.junit_path)
            junit_sha256 = hashlib.sha256(text.encode()).hexdigest()
            junit = parse_junit(text)
        except FileNotFoundError:
            report.notes.append("no JUnit report: the test run crashed or timed out")
        except Exception as exc:  # a malformed report is the candidate's fault, not a crash
            report.notes.append(f"unreadable JUnit report: {exc}")
        if junit is None and run.guard_module in output:
            report.error = GUARD_NOT_LOADED
        written = read_guard(sandbox, run)
        channel_flags: list[IntegrityFlag] = []
        if run.collector is None:
            run.guard = written
        else:  # the file is a copy the test process could rewrite: the collector's is the report
            run.guard, channel_flags = collected_guard(read_evidence(sandbox, run.collector))
            if run.guard is not None:
                channel_flags += file_flags(run.guard, written, junit_sha256)
        report.outcomes, report.flags = check_run(run, junit, kept, sandbox.workdir)
        report.flags = [*channel_flags, *report.flags]
        return report


PYTEST = PytestRunner()
TOX = PytestRunner(prelude=TOX_PASS_ENV)
