"""Gathering with the environment of the commit's era (tests/era_repo.py): a 2022 commit whose
conftest uses a hook argument pytest 9 removed validates with the pytest of its era (pytest<8, on
the Python base its `requires-python` picks); the same commits authored in 2026 get today's pytest,
which refuses the conftest, and are left out with one line naming the error."""

import json

import pytest
from conftest import run_evalkit
from era_repo import build_era_repo

from evalkit.sandbox.images import resolve_image
from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration
SMALL = ("--min-lines", "1", "--min-files", "1", "--runs", "1")


def _pytest_version(docker_engine, recipe) -> str:
    tag = resolve_image(docker_engine, str(recipe))
    output = docker_engine.containers.run(tag, ["python", "-m", "pytest", "--version"], remove=True, user="1000")
    return output.decode().strip()


def test_an_old_commit_validates_with_its_eras_pytest(docker_engine, tmp_path):
    repo = build_era_repo(tmp_path / "calc", 2022)
    gathered = run_evalkit("gather", repo, "--out", tmp_path / "suite", *SMALL)
    assert gathered.returncode == 0, gathered.stderr[-3000:]
    (task,) = load_suite(tmp_path / "suite").tasks
    assert task.metadata["era"] == "pytest<8"
    # the module imports `mul`: on the base it does not load, so every test in it is FAIL_TO_PASS
    assert {"tests/test_calc.py::test_mul", "tests/test_calc.py::test_mul_by_zero"} <= set(task.tests.fail_to_pass)
    recipe = tmp_path / "suite" / task.id / task.image
    assert "ARG BASE_IMAGE=evalkit/base-trixie:latest" in (recipe / "Dockerfile").read_text()  # requires-python >=3.12
    assert _pytest_version(docker_engine, recipe.resolve()).startswith("pytest 7.")


def test_the_same_commits_of_todays_era_get_todays_pytest_and_one_line_why(docker_engine, tmp_path):
    repo = build_era_repo(tmp_path / "calc", 2026)
    gathered = run_evalkit("gather", repo, "--out", tmp_path / "suite", *SMALL)
    assert gathered.returncode == 0, gathered.stderr[-3000:]
    report = json.loads((tmp_path / "suite" / "gather-report.json").read_text())
    (rejected,) = report["rejected"]
    assert report["accepted"] == [] and rejected["stage"] == "validation"
    reason = rejected["reason"]  # one line, with the error pytest printed first
    assert "\n" not in reason and "PluginValidationError" in reason and "pytest_collect_file" in reason, reason
    (recipe,) = (tmp_path / "suite" / "_env").iterdir()
    assert _pytest_version(docker_engine, recipe).startswith("pytest 9.")
