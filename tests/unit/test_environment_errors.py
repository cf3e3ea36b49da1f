"""An environment that cannot run the tests is an error with the line that says why, and
validation says only that (not a follow-up "the reference patch does not apply")."""

from __future__ import annotations

from evalkit.tasks.model import Task
from evalkit.verify.correctness import CorrectnessResult, first_failing_line
from evalkit.verify.health import assess_health

PYTEST_CONFTEST_FAILURE = """$ apply hidden tests
Checking patch tests/conftest.py...
Applied patch tests/conftest.py cleanly.
$ python -m pytest tests  (exit 4)
ImportError while loading conftest '/workspace/tests/conftest.py'.
tests/conftest.py:1: in <module>
    import docutils
E   ModuleNotFoundError: No module named 'docutils'
"""


def test_the_most_telling_line_is_the_one_pytest_marks():
    assert first_failing_line(PYTEST_CONFTEST_FAILURE) == "ModuleNotFoundError: No module named 'docutils'"


def test_a_coloured_run_names_the_same_line():
    """Under `--color yes` (sphinx's tox.ini) pytest colours its E lines."""
    coloured = PYTEST_CONFTEST_FAILURE.replace("E   Module", "\x1b[1m\x1b[31mE   Module") + "\x1b[0m"
    assert first_failing_line(coloured) == "ModuleNotFoundError: No module named 'docutils'"


def test_without_an_error_line_the_last_line_is_said():
    assert first_failing_line("collected 0 items\nsomething odd happened\n") == "something odd happened"
    assert first_failing_line("") == "no output"


def _task() -> Task:
    return Task.model_validate(
        {
            "id": "t1",
            "prompt": "Do it.",
            "repo": "r",
            "source": {"snapshot": "/nowhere"},
            "tests": {"command": "pytest", "fail_to_pass": ["tests/test_a.py::test_a"], "pass_to_pass": []},
            "patch": "",
            "test_patch": "",
        }
    )


def test_validation_of_an_environment_error_says_only_that():
    broken = CorrectnessResult(
        task_id="t1",
        patch_empty=True,
        patch_applied=True,
        environment_error=True,
        error="the tests do not run here, even without a change: ModuleNotFoundError: No module named 'docutils'",
    )
    health = assess_health(_task(), [broken], broken, 1.0)
    assert not health.valid and health.problems == [broken.error]


def test_a_sandbox_that_never_opened_is_not_followed_by_the_reference_patch_not_applying():
    failed = CorrectnessResult(task_id="t1", error="building recipe x: step 3 failed")
    health = assess_health(_task(), [failed], failed, 1.0)
    assert health.problems == ["building recipe x: step 3 failed"]


LINKCHECK_LOG = """\
tests/test_build_linkcheck.py F
=================================== FAILURES ===================================
________________________________ test_defaults _________________________________
    def test_defaults(app):
>       assert "Anchor 'top' not found" in content
E       assert "Anchor 'top' not found" in "links.txt:13: [broken] https://www.google.com/#top: \
HTTPSConnectionPool: Failed to resolve 'www.google.com'"
E        +  where ... = ...
"""


def test_a_reference_patch_that_fails_says_what_the_first_failing_test_said():
    """Offline, sphinx's linkcheck tests fail with the reference change too; the verdict line says why."""
    gold = CorrectnessResult(task_id="t1", patch_applied=True, tests_ran=True, log=LINKCHECK_LOG)
    gold.fail_to_pass.failed.append("tests/test_a.py::test_a")
    empty = CorrectnessResult(task_id="t1", patch_empty=True, patch_applied=True, tests_ran=True)
    health = assess_health(_task(), [gold], empty, 1.0)
    assert not health.valid
    assert health.problems[0].startswith("with the reference patch these fail: tests/test_a.py::test_a (first error: ")
    assert "Failed to resolve 'www.google.com'" in health.problems[0]
    coloured = LINKCHECK_LOG.replace("E       assert", "\x1b[1m\x1b[31mE       assert")
    gold.log = coloured
    assert "Failed to resolve 'www.google.com'" in assess_health(_task(), [gold], empty, 1.0).problems[0]
