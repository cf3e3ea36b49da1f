"""Gathered prompts on a repository built by the test (tests/stock_repo.py): a commit whose tests use
a new method absent from its subject gets it in the interface; a name the tests need that nothing
gives leaves the task out by default, and `--keep-underspecified` keeps it flagged, as
`tasks validate` shows."""

import json

import pytest
from conftest import run_evalkit
from stock_repo import build_stock_repo

from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration
SMALL = ("--min-lines", "1", "--min-files", "1", "--runs", "1")


def test_underspecified_tasks_are_left_out_unless_kept_and_then_flagged(docker_engine, tmp_path):
    repo = build_stock_repo(tmp_path / "stock")
    dropped = run_evalkit("gather", repo, "--out", tmp_path / "dropped", *SMALL)
    assert dropped.returncode == 0, dropped.stderr[-3000:]
    report = json.loads((tmp_path / "dropped" / "gather-report.json").read_text())
    assert report["accepted"] == [] and [r["stage"] for r in report["rejected"]] == ["prompt"]
    assert report["rejected"][0]["reason"].startswith("underspecified: the tests need last_hold")

    kept = run_evalkit("gather", repo, "--out", tmp_path / "kept", *SMALL, "--keep-underspecified")
    assert kept.returncode == 0, kept.stderr[-3000:]
    (task,) = load_suite(tmp_path / "kept").tasks
    assert "`def Stock.reserve(self, sku, n, *, hold_minutes=15)`" in task.prompt
    assert task.underspecified == ["last_hold"] and task.tests.fail_to_pass == ["tests/test_stock.py::test_reserve"]
    validated = run_evalkit("tasks", "validate", tmp_path / "kept", "--json", "--runs", "1")
    (row,) = json.loads(validated.stdout)
    assert row["valid"] and row["underspecified"] == ["last_hold"]
    assert "1 task underspecified" in validated.stderr
