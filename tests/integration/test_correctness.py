"""Correctness scoring against the real engine, on the toy task built by tests/toy.py."""

import pytest
from toy import BASE_FILES, HIDDEN_TEST, POWER, diff_of

from evalkit.verify.correctness import evaluate_patch
from evalkit.verify.junit import TestStatus

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def snapshot(toy_task):
    return toy_task.source.snapshot


def test_reference_patch_resolves(toy_task, backend):
    result = evaluate_patch(toy_task, toy_task.patch, backend)
    assert result.resolved, result.log
    assert result.patch_applied and result.apply_method == "git apply" and result.tests_ran
    assert result.fail_to_pass.fraction == 1.0 and result.pass_to_pass.fraction == 1.0
    assert {"setup", "apply", "tests", "total"} <= set(result.durations)


def test_empty_patch_does_not_resolve(toy_task, backend):
    result = evaluate_patch(toy_task, "", backend)
    assert result.patch_empty and not result.resolved
    assert result.fail_to_pass.failed == toy_task.tests.fail_to_pass
    assert result.pass_to_pass.fraction == 1.0


def test_patch_that_breaks_a_pass_to_pass_test_does_not_resolve(toy_task, backend, snapshot):
    broken = BASE_FILES["calc/__init__.py"].replace("return a * b", "return a + b") + POWER.replace(
        "mul(result, a)", "result * a"
    )
    result = evaluate_patch(toy_task, diff_of(snapshot, {"calc/__init__.py": broken}), backend)
    assert result.patch_applied and not result.resolved
    assert result.fail_to_pass.fraction == 1.0
    assert result.statuses["tests/test_calc.py::test_mul"] == TestStatus.FAILED


def test_patch_that_does_not_apply_is_reported_and_not_run(toy_task, backend):
    garbage = "diff --git a/calc/nothere.py b/calc/nothere.py\n--- a/calc/nothere.py\n+++ b/calc/nothere.py\n"
    garbage += "@@ -1,2 +1,2 @@\n-old line\n+new line\n context\n"
    result = evaluate_patch(toy_task, garbage, backend)
    assert not result.patch_applied and not result.tests_ran and not result.resolved
    assert result.apply_method is None and "does not apply" in result.log


def test_agent_edits_to_hidden_test_files_are_overridden(toy_task, backend, snapshot):
    cheat = diff_of(
        snapshot, {"tests/test_power.py": "def test_power():\n    pass\n\n\ndef test_power_zero():\n    pass\n"}
    )
    result = evaluate_patch(toy_task, cheat, backend)
    assert result.patch_applied and not result.resolved
    assert result.fail_to_pass.failed == toy_task.tests.fail_to_pass


def test_hidden_tests_are_not_in_the_workspace_before_scoring(toy_task, backend):
    with backend.open(toy_task, role="agent") as sandbox:
        found = sandbox.exec("git log --all --oneline | wc -l; grep -rl 'def power' . ; ls tests")
    assert found.stdout.split("\n")[0].strip() == "1"
    assert "test_power" not in found.stdout and "calc/__init__.py" not in found.stdout
    assert HIDDEN_TEST.splitlines()[0] not in found.stdout


def test_tests_that_cannot_run_in_the_environment_are_an_error_not_a_wrong_answer(toy_task, backend, snapshot):
    missing = diff_of(snapshot, {"tests/conftest.py": "import evalkit_missing_dependency  # noqa\n"})
    broken_env = toy_task.model_copy(update={"test_patch": toy_task.test_patch + missing})
    for patch in (toy_task.patch, ""):
        result = evaluate_patch(broken_env, patch, backend)
        assert not result.tests_ran and not result.resolved
        assert result.environment_error, result.log
        assert "No module named 'evalkit_missing_dependency'" in (result.error or ""), result.error


def test_a_candidate_that_stops_the_test_run_is_a_wrong_answer_not_an_environment_error(toy_task, backend, snapshot):
    exits = BASE_FILES["calc/__init__.py"] + "\nimport os\nos._exit(3)\n"
    result = evaluate_patch(toy_task, diff_of(snapshot, {"calc/__init__.py": exits}), backend)
    assert result.patch_applied and not result.tests_ran and not result.resolved
    assert not result.environment_error and result.error is None
