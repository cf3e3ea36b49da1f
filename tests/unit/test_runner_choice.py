"""The test runner of a task: chosen from SWE-bench's spec on import, and the command each runner
completes in the scoring sandbox (no Docker: commands are strings, logs are parsed elsewhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.tasks import load_suite
from evalkit.tasks.model import TestSpec
from evalkit.tasks.spec_commands import framework_of, spec_tests
from evalkit.tasks.swebench import export_swebench, import_swebench, read_swebench_rows
from evalkit.tasks.write import write_suite
from evalkit.verify.guarded_run import GuardedRun
from evalkit.verify.runners import runner_for
from evalkit.verify.runners.log_runners import django_labels, unittest_labels
from evalkit.verify.runners.pytest_runners import listed_test_files

VERIFIED_CSV = Path(__file__).resolve().parents[1] / "fixtures" / "swebench" / "swe_bench_verified_mini50.csv"
RUN = GuardedRun("/tmp/evalkit/abc/junit.xml", "/tmp/evalkit/abc/guard.json", "evalkit_guard_abc")


@pytest.fixture(scope="module")
def imported():
    tasks, problems = import_swebench(read_swebench_rows(str(VERIFIED_CSV)), None)
    assert problems == []
    return tasks


@pytest.mark.parametrize(
    ("repo", "version", "framework", "command"),
    [
        ("sphinx-doc/sphinx", "3.2", "tox", "tox --current-env -epy39 -v --"),
        ("django/django", "3.1", "django", "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"),
        ("psf/requests", "2.0", "pytest", "pytest -rA"),
        ("mwaskom/seaborn", "0.12", "pytest", "pytest --no-header -rA"),
    ],
)
def test_the_runner_comes_from_swebench_spec(repo, version, framework, command):
    assert spec_tests(repo, version) == {"command": command, "framework": framework}
    assert runner_for(framework).guarded == (framework in ("pytest", "tox"))


def test_commands_without_a_runner_and_unknown_versions_keep_the_default():
    assert framework_of("PYTHONWARNINGS='ignore::UserWarning' bin/test -C --verbose") is None  # sympy
    assert spec_tests("sympy/sympy", "1.1") is None
    assert spec_tests("sphinx-doc/sphinx", "0.0") is None
    assert spec_tests("nobody/nothing", "1.0") is None


def test_imported_rows_run_under_their_spec_runner_and_survive_a_suite_folder(imported, tmp_path):
    by_repo = {}
    for task in imported:
        by_repo.setdefault(task.repo, set()).add((task.tests.framework, task.tests.command))
    assert by_repo["sphinx-doc/sphinx"] >= {("tox", "tox --current-env -epy39 -v --")}
    assert {f for f, _ in by_repo["sphinx-doc/sphinx"]} == {"tox"}
    assert {f for f, _ in by_repo["django/django"]} == {"django"}
    write_suite(tmp_path / "suite", "verified", "runners", imported)
    reloaded = {t.id: t for t in load_suite(tmp_path / "suite").tasks}
    assert all(reloaded[t.id].tests == t.tests for t in imported)
    assert export_swebench(list(reloaded.values())) == export_swebench(imported)


def test_a_framework_without_a_command_gets_its_usual_one():
    assert TestSpec(fail_to_pass=["a"]).command == "python -m pytest"
    assert TestSpec(framework="unittest", fail_to_pass=["a"]).command == "python -m unittest -v"
    assert TestSpec(framework="django", fail_to_pass=["a"]).command.startswith("./tests/runtests.py --verbosity 2")
    with pytest.raises(ValueError, match="framework tox needs a `command`"):
        TestSpec(framework="tox", fail_to_pass=["a"])


def test_an_unknown_runner_name_is_one_line():
    with pytest.raises(EvalkitError, match="unknown test framework 'nose'; known test frameworks: django, pytest"):
        runner_for("nose")


def test_django_runs_the_test_patch_modules_as_swebench_does(imported):
    task = next(t for t in imported if t.id == "django__django-11790")
    assert django_labels(task) == ["auth_tests.test_forms"]
    command = runner_for("django").command(task, RUN)
    assert command.endswith("{ ./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1 "
                            "auth_tests.test_forms ; } 2>&1")  # fmt: skip
    assert "PYTEST_ADDOPTS=" in command and RUN.guard_module not in command


def test_unittest_runs_the_modules_of_the_listed_tests(imported):
    task = imported[0].model_copy(deep=True)
    task.tests = TestSpec(
        framework="unittest",
        fail_to_pass=["test_power (calc.tests.test_power.PowerTests)", "a docstring line"],
        pass_to_pass=["test_add (calc.tests.test_calc.CalcTests.test_add)"],
    )
    assert unittest_labels(task) == ["calc.tests.test_calc", "calc.tests.test_power"]
    assert "{ python -m unittest -v calc.tests.test_calc calc.tests.test_power ; } 2>&1" in (
        runner_for("unittest").command(task, RUN)
    )


def test_tox_passes_the_guarded_pytest_arguments_after_its_double_dash(imported):
    task = next(t for t in imported if t.repo == "sphinx-doc/sphinx")
    command = runner_for("tox").command(task, RUN)
    variables = "PYTHONPATH,EVALKIT_GUARD_REPORT,EVALKIT_GUARD_WATCH,EVALKIT_GUARD_CHANNEL"
    assert f"export TOX_OVERRIDE='testenv.pass_env+={variables}'" in command
    tox_part = command[command.index("tox --current-env") :]
    assert tox_part.startswith(f"tox --current-env -epy39 -v -- -p {RUN.guard_module} -p no:cacheprovider")
    assert f"--junitxml={RUN.junit_path}" in tox_part
    files = listed_test_files(task)
    assert files and all(f.startswith("tests/test_") for f in files)
    assert tox_part.endswith(" " + " ".join(files))
