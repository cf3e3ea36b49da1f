"""The shipped suite of real tasks is what its docs promise: enough tasks from enough repositories,
large changes, short reviewed prompts, each naming its upstream, and small enough to ship.
Read from the folder as shipped, no Docker (the sample's validation is an integration test)."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from evalkit.diffs import changed_paths, numstat
from evalkit.tasks import load_suite

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "python-libs"


@pytest.fixture(scope="module")
def tasks():
    suite = load_suite(SUITE)
    assert not suite.skipped, suite.skipped
    return suite.tasks


def _changed_lines(patch: str) -> int:
    return sum(sum(counts) for counts in numstat(patch).values() if counts)


def test_at_least_40_tasks_from_5_repositories(tasks):
    assert len(tasks) >= 40
    assert len({t.metadata["upstream"] for t in tasks}) >= 5


def test_large_multi_file_reference_changes(tasks):
    lines = [_changed_lines(t.patch) for t in tasks]
    assert min(lines) >= 40 and statistics.median(lines) >= 80
    assert statistics.median(len(changed_paths(t.patch)) for t in tasks) >= 2


def test_short_reviewed_prompts_with_nothing_flagged(tasks):
    assert 250 <= statistics.median(len(t.prompt) for t in tasks) <= 450
    assert {t.metadata["prompt_source"] for t in tasks} == {"revised by hand"}
    assert all(t.metadata.get("review") and t.metadata.get("draft_prompt") for t in tasks)
    assert [t.id for t in tasks if t.underspecified] == []


def test_every_task_names_its_upstream_commit_date_and_license(tasks):
    for task in tasks:
        meta = task.metadata
        assert meta["upstream"].startswith("https://github.com/") and len(meta["commit"]) == 40, task.id
        assert meta["commit_date"][:4].isdigit() and meta["license"] in {"MIT", "BSD-3-Clause"}, task.id
        license_file = (SUITE / task.id / meta["license_file"]).resolve()
        assert license_file.is_file() and license_file.parent == SUITE / "repos", task.id
        assert Path(task.source.git).parent == SUITE / "repos" and Path(task.source.git).is_file(), task.id


def test_the_suite_ships_in_at_most_60_mb_without_host_files():
    files = [p for p in SUITE.rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in files) <= 60_000_000
    assert not [p for p in files if p.name == "ca-bundle.crt" or p.suffix == ".whl"]
