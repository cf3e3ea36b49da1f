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
