"""A sample of the shipped real suite validated as a user would, from the folder as shipped: the
workspace comes out of the suite's git bundle, the environment image is built from the shipped
recipe (the host's CA bundle and pip wheel added by the build), the reference change resolves the
task and the empty change does not. The whole suite is `make validate-real` (and a benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_evalkit

from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration
SUITE = Path(__file__).resolve().parents[2] / "tasks" / "python-libs"


def _sample() -> list[str]:
    """Two tasks of different repositories and eras: the oldest and the newest commit."""
    tasks = sorted(load_suite(SUITE).tasks, key=lambda t: t.metadata["commit_date"][:10])
    newest = next(t for t in reversed(tasks) if t.repo != tasks[0].repo)
    return [tasks[0].id, newest.id]


def test_a_sample_of_the_real_suite_validates_from_its_bundles(docker_engine, tmp_path):
    sample = _sample()
    out = tmp_path / "validation.json"
    args = [a for task in sample for a in ("--task", task)]
    result = run_evalkit("tasks", "validate", SUITE, *args, "--runs", "1", "--json", out, timeout=1800)
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-2000:])
    rows = {row["task_id"]: row for row in json.loads(out.read_text())}
    assert sorted(rows) == sorted(sample)
    assert all(row["valid"] for row in rows.values()), rows
