"""Gathering with the environment of the commit's era (tests/era_repo.py): a 2022 commit whose
conftest uses a hook argument pytest 9 removed validates with the pytest of its era (pytest<8, on
the Python base its `requires-python` picks); the same commits authored in 2026 get today's pytest,
which refuses the conftest, and are repaired to the previous major."""

import json

import pytest
from conftest import run_evalkit
from era_repo import OLD_STYLE_CALC, UNDECLARED, build_era_repo

from evalkit.sandbox.docker.images import resolve_image
from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration
SMALL = ("--min-lines", "1", "--min-files", "1", "--runs", "1")


def _pytest_version(docker_engine, recipe) -> str:
    tag = resolve_image(docker_engine, str(recipe))
    said = ["python", "-c", "import pytest; print('pytest', pytest.__version__)"]  # pytest 6 prints --version to stderr
    output = docker_engine.containers.run(tag, said, remove=True, user="1000")
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
    assert json.loads((tmp_path / "suite" / "gather-report.json").read_text())["funnel"]["environment_ran"] == 1


def test_a_2019_commit_declaring_no_python_runs_on_the_python_of_its_time(docker_engine, tmp_path):
    """`from collections import Mapping` fails on the default base's 3.11: with the 3.9 base and the
    pytest of 2021 of its era, the commit's own tests run and it validates."""
    repo = build_era_repo(tmp_path / "calc", 2019, UNDECLARED, OLD_STYLE_CALC)
    gathered = run_evalkit("gather", repo, "--out", tmp_path / "suite", *SMALL)
    assert gathered.returncode == 0, gathered.stderr[-3000:]
    (task,) = load_suite(tmp_path / "suite").tasks
    assert task.metadata["era"] == "python<3.10"
    recipe = tmp_path / "suite" / task.id / task.image
    assert "ARG BASE_IMAGE=evalkit/base-bullseye:latest" in (recipe / "Dockerfile").read_text()
    assert _pytest_version(docker_engine, recipe.resolve()).startswith("pytest 6.")


def test_the_same_commits_of_todays_era_are_repaired_to_the_previous_pytest(docker_engine, tmp_path):
    """Today's pytest refuses the conftest's removed hook argument before any test runs: the repair
    loop reads pluggy's error as "pytest too new", rewrites the recipe with the previous major and
    runs the tests again; the round is recorded and the task validates."""
    repo = build_era_repo(tmp_path / "calc", 2026)
    gathered = run_evalkit("gather", repo, "--out", tmp_path / "suite", *SMALL)
    assert gathered.returncode == 0, gathered.stderr[-3000:]
    (task,) = load_suite(tmp_path / "suite").tasks
    assert task.metadata["environment_repairs"] == "pytest too new: pytest<9 → ran"
    assert _pytest_version(docker_engine, (tmp_path / "suite" / task.id / task.image).resolve()).startswith("pytest 8.")
    report = json.loads((tmp_path / "suite" / "gather-report.json").read_text())
    funnel = report["funnel"]  # it ran after a repair: a success of the environment, counted as repaired
    assert (funnel["environment_ran"], funnel["environment_failed"], funnel["environment_repaired"]) == (1, 0, 1)
    decisions = [json.loads(line) for line in (tmp_path / "suite" / "decisions.jsonl").read_text().splitlines()]
    assert [d["repairs"] for d in decisions if d["outcome"] == "accepted"] == [["pytest too new: pytest<9 → ran"]]
    assert "1 after a repair" in gathered.stdout
