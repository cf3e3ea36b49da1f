"""Runners beyond pytest, for real: a unittest-framework task scored in the Docker sandbox, and the
guarded tox command (tox 4.16 + tox-current-env, as SWE-bench runs sphinx) run on the host with a
sphinx-like tox.ini, tox installed from PyPI into a venv under the test's tmp dir."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from toy import diff_of, write_files

from evalkit.tasks.model import Task
from evalkit.verify.correctness import evaluate_patch
from evalkit.verify.guarded_run import GUARD_PARTS, GUARD_SOURCE, GuardedRun, check_run, read_guard
from evalkit.verify.junit import TestStatus, parse_junit
from evalkit.verify.runners import runner_for

pytestmark = pytest.mark.integration

CALC = "def add(a, b):\n    return a + b\n"
POWER = "\n\ndef power(a, b):\n    return a**b\n"
CALC_TESTS = textwrap.dedent(
    """
    import unittest

    from calc import add


    class CalcTests(unittest.TestCase):
        def test_add(self):
            self.assertEqual(add(2, 3), 5)

        def test_add_documented(self):
            \"\"\"Adding zero changes nothing.\"\"\"
            self.assertEqual(add(5, 0), 5)
    """
).lstrip()
POWER_TESTS = textwrap.dedent(
    """
    import unittest


    class PowerTests(unittest.TestCase):
        def test_power(self):
            from calc import power

            self.assertEqual(power(2, 10), 1024)
    """
).lstrip()


def calc_task(folder: Path, task_id: str, framework: str, files: dict, tests: tuple, test_files: dict) -> Task:
    """The calc task of `framework`: `files` the base tree, `tests` (FAIL_TO_PASS, PASS_TO_PASS) as
    that runner names them, `test_files` what the hidden test change writes."""
    snapshot = write_files(folder, files)
    if (snapshot / "tests" / "runtests.py").exists():
        (snapshot / "tests" / "runtests.py").chmod(0o755)
    fail_to_pass, pass_to_pass = tests
    return Task(
        id=task_id,
        prompt="Add integer power to calc.",
        source={"snapshot": snapshot},
        tests={"framework": framework, "fail_to_pass": fail_to_pass, "pass_to_pass": pass_to_pass, "timeout_s": 120},
        patch=diff_of(snapshot, {"calc/__init__.py": CALC + POWER}),
        test_patch=diff_of(snapshot, test_files),
    )


@pytest.fixture(scope="module")
def unittest_task(tmp_path_factory) -> Task:
    return calc_task(
        tmp_path_factory.mktemp("unittest-task") / "calc",
        "calc-power-unittest",
        "unittest",
        {"calc/__init__.py": CALC, "tests/__init__.py": "", "tests/test_calc.py": CALC_TESTS},
        (
            ["test_power (tests.test_power.PowerTests)"],
            ["test_add (tests.test_calc.CalcTests)", "test_add_documented (tests.test_calc.CalcTests)"],
        ),
        {"tests/test_power.py": POWER_TESTS},
    )


def test_unittest_task_reference_patch_resolves_from_the_log(unittest_task, backend):
    result = evaluate_patch(unittest_task, unittest_task.patch, backend)
    assert result.resolved, result.log
    assert result.tests_ran and not result.guarded and result.integrity_flags == []
    assert "python -m unittest -v tests.test_calc tests.test_power" in result.log


def test_unittest_task_empty_patch_does_not_resolve(unittest_task, backend):
    result = evaluate_patch(unittest_task, "", backend)
    assert result.tests_ran and not result.resolved and result.error is None
    assert result.statuses["test_power (tests.test_power.PowerTests)"] == TestStatus.ERROR  # ImportError
    assert result.pass_to_pass.fraction == 1.0


# A stand-in for Django's tests/runtests.py: the same arguments, verbose unittest output of the
# labels given, and the start-up lines Django prints around it.
RUNTESTS = textwrap.dedent(
    """
    #!/usr/bin/env python3
    import argparse
    import os
    import sys
    import unittest

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:0] = [here, os.path.dirname(here)]
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbosity", type=int, default=1)
    parser.add_argument("--settings")
    parser.add_argument("--parallel", type=int)
    parser.add_argument("labels", nargs="*")
    args = parser.parse_args()
    print("Testing against Django installed in '/testbed/django'", file=sys.stderr)
    print("System check identified no issues (0 silenced).", file=sys.stderr)
    suite = unittest.defaultTestLoader.loadTestsFromNames(args.labels)
    result = unittest.TextTestRunner(verbosity=args.verbosity).run(suite)
    sys.exit(not result.wasSuccessful())
    """
).lstrip()


@pytest.fixture(scope="module")
def django_style_task(tmp_path_factory) -> Task:
    return calc_task(
        tmp_path_factory.mktemp("django-task") / "calc",
        "calc-power-django",
        "django",
        {"calc/__init__.py": CALC, "tests/runtests.py": RUNTESTS, "tests/calc_tests/__init__.py": "",
         "tests/calc_tests/tests.py": CALC_TESTS},
        (
            ["test_power (calc_tests.tests.PowerTests)"],
            ["test_add (calc_tests.tests.CalcTests)", "Adding zero changes nothing."],
        ),
        {"tests/calc_tests/tests.py": CALC_TESTS + "\n\n" + POWER_TESTS},
    )  # fmt: skip


def test_django_style_task_runs_the_test_patch_modules_and_reads_swebench_ids(django_style_task, backend):
    gold = evaluate_patch(django_style_task, django_style_task.patch, backend)
    assert gold.resolved, gold.log
    assert "--parallel 1 calc_tests.tests ; } 2>&1" in gold.log and not gold.guarded
    empty = evaluate_patch(django_style_task, "", backend)
    assert empty.tests_ran and not empty.resolved
    assert empty.fail_to_pass.failed == ["test_power (calc_tests.tests.PowerTests)"]
    assert empty.pass_to_pass.fraction == 1.0


SPHINX_LIKE_TOX_INI = textwrap.dedent(
    """
    [tox]
    minversion = 2.4.0
    envlist = py39

    [testenv]
    usedevelop = True
    passenv =
        PYTEST_ADDOPTS
        TERM
    setenv =
        PYTHONWARNINGS=all
    commands=
        python -X dev -m pytest --durations 25 {posargs}
    """
).lstrip()
TOX_TESTS = "def test_passes():\n    assert True\n\n\ndef test_fails():\n    assert False\n"


# On the host the guard must not do its last act: SIGKILL every process of the user that is not an
# ancestor (in a sandbox, what the code under test left running; here, as root, the Docker engine
# and every other process of the machine). The rest of the guard runs unchanged.
_KILL_LINE = 'KILL_STRAYS = os.environ.get("EVALKIT_SANDBOX") == "1" and os.getuid() != 0'
assert _KILL_LINE in GUARD_SOURCE  # set before the guard's own snapshot of the runner, not patched after
HOST_SAFE_GUARD = GUARD_SOURCE.replace(_KILL_LINE, "KILL_STRAYS = False")


@pytest.fixture(scope="module")
def tox_bin(tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("tox-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pins = ["tox==4.16.0", "tox-current-env==0.0.11", "pytest"]
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", *pins], capture_output=True, text=True, timeout=600
    )
    if installed.returncode != 0:
        message = f"cannot install {' '.join(pins)} from PyPI: {installed.stderr.strip()[-300:]}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return venv / "bin"


def test_guarded_tox_command_loads_the_guard_and_writes_the_junit_report(tox_bin, tmp_path):
    project = write_files(tmp_path / "project", {"tox.ini": SPHINX_LIKE_TOX_INI, "tests/test_a.py": TOX_TESTS})
    folder = tmp_path / "run"
    run = GuardedRun(str(folder / "junit.xml"), str(folder / "guard.json"), "evalkit_guard_tox")
    (folder / "plugin").mkdir(parents=True)
    (folder / "plugin" / f"{run.guard_module}.py").write_text(HOST_SAFE_GUARD)
    for name, source in GUARD_PARTS.items():
        (folder / "plugin" / name).write_text(source)
    task = Task(
        id="tox-task",
        prompt="p",
        source={"snapshot": project},
        tests={
            "framework": "tox",
            "command": "tox --current-env -epy39 -v --",
            "fail_to_pass": ["tests/test_a.py::test_passes"],
        },
        patch="",
        test_patch="",
    )
    command = runner_for("tox").command(task, run)
    environment = {"PATH": f"{tox_bin}:/usr/bin:/bin", "HOME": str(tmp_path)}
    bystander = subprocess.Popen(["sleep", "300"])  # a process of the same user the run must not touch
    try:
        done = subprocess.run(
            ["bash", "-c", command], cwd=project, env=environment, capture_output=True, text=True, timeout=300
        )
        assert bystander.poll() is None, "the guard killed processes outside the test run on the host"
    finally:
        bystander.kill()
        bystander.wait()
    assert f"-p {run.guard_module}" in done.stdout, done.stdout + done.stderr  # tox ran pytest with the guard
    junit = parse_junit(Path(run.junit_path).read_text())
    run.guard = read_guard(_HostFiles(), run)
    outcomes, flags = check_run(run, junit, {}, str(project))
    assert flags == [] and run.guard["finished"]
    assert outcomes == {
        "tests/test_a.py::test_passes": TestStatus.PASSED,
        "tests/test_a.py::test_fails": TestStatus.FAILED,
    }


class _HostFiles:
    """The one Sandbox method `read_guard` uses, on the host's files."""

    def read_file(self, path: str) -> str:
        return Path(path).read_text()
