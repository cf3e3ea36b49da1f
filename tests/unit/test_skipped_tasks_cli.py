"""A suite with a task that does not load: `tasks list`, `tasks validate` and `run` stop with exit 2
(one line per skipped task, then one saying how to go on) unless `--skip-invalid`; `tasks list`
shows the suite's medians."""

import shutil
from functools import partial

import pytest
from conftest import DEMO_SUITE, run_evalkit

evalkit = partial(run_evalkit, timeout=120)


@pytest.fixture
def broken_suite(tmp_path):
    """A copy of the demo suite whose kvstore-batch task.toml has a misspelt key."""
    suite = tmp_path / "demo"
    shutil.copytree(DEMO_SUITE, suite)
    task_file = suite / "kvstore-batch" / "task.toml"
    task_file.write_text(task_file.read_text().replace("[tests]\n", "[tests]\ntimeout = 30\n"))
    return suite


@pytest.mark.parametrize(
    ("command", "verb"),
    [
        (["tasks", "list"], "list"),
        (["tasks", "validate"], "validate"),
        (["run", "--model", "oracle", "--suite"], "run"),
    ],
)
def test_a_skipped_task_stops_the_command_with_one_line_each(broken_suite, tmp_path, command, verb):
    out = tmp_path / "runs"
    extra = ["--out", out] if verb == "run" else []
    result = evalkit(*command, broken_suite, *extra)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0] == (
        f"invalid task {broken_suite}/kvstore-batch/task.toml: unknown key `tests.timeout` (did you mean "
        "`timeout_s`?); allowed: command, framework, fail_to_pass, pass_to_pass, timeout_s"
    )
    assert lines[-1] == (
        f"error: 1 of the 8 tasks of {broken_suite} cannot be loaded (above); fix it, "
        f"or pass --skip-invalid to {verb} the other 7"
    )
    assert not out.exists() and result.stdout == ""


def test_skip_invalid_lists_the_rest_and_says_how_many_loaded(broken_suite):
    result = evalkit("tasks", "list", broken_suite, "--skip-invalid")
    assert result.returncode == 0, result.stderr
    assert "demo: 7 of 8 tasks loaded" in result.stdout and "kvstore-batch" not in result.stdout
    assert result.stderr.startswith(f"skipped {broken_suite}/kvstore-batch/task.toml: unknown key `tests.timeout`")


def test_tasks_list_shows_each_tasks_sizes_and_the_medians():
    result = evalkit("tasks", "list", DEMO_SUITE)
    assert result.returncode == 0, result.stderr
    assert "demo: 8 tasks" in result.stdout
    median = next(line for line in result.stdout.splitlines() if "median" in line)
    assert [cell.strip() for cell in median.split("│")[1:-1]] == ["median", "", "364", "154", "4", "6", "37", ""]
