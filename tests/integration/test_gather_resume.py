"""A gather killed with SIGKILL in the middle of validating keeps every decision made so far (and a
valid suite), and the same command again continues without deciding any commit twice; two
candidates validated side by side give the same suite as one at a time."""

import json
import os
import signal
import subprocess
import time

import pytest
from conftest import EVALKIT, run_evalkit
from shop_repo import EXPECTED_TASK_SUBJECTS, FLAKY_TEST, build_shop_repo

from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration

# --runs 2: long enough a validation to be killed in the middle of, short enough a test
OPTIONS = ["--min-lines", "20", "--runs", "2"]


def decisions(out):
    path = out / "decisions.jsonl"
    return path.read_text().splitlines() if path.exists() else []


def suite_of(out):
    """Per task subject: (FAIL_TO_PASS, PASS_TO_PASS) without the coin-flip test, and the task ids
    in the suite's order."""
    tasks = load_suite(out).tasks
    lists = {
        t.metadata["original_message"].splitlines()[0]: (
            [i for i in t.tests.fail_to_pass if i != FLAKY_TEST],
            [i for i in t.tests.pass_to_pass if i != FLAKY_TEST],
        )
        for t in tasks
    }
    return lists, [t.id for t in tasks]


@pytest.fixture(scope="module")
def shop(docker_engine, tmp_path_factory):
    return build_shop_repo(tmp_path_factory.mktemp("resume") / "shop")


@pytest.fixture(scope="module")
def killed_and_resumed(shop, tmp_path_factory):
    out = tmp_path_factory.mktemp("resume") / "suite"
    gather = subprocess.Popen(
        [EVALKIT, "gather", shop, "--out", out, "--concurrency", "1", *OPTIONS],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 600
    while len(decisions(out)) < 4 and gather.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # 3 commits screened out, then the first candidate validated
    os.kill(gather.pid, signal.SIGKILL)
    assert gather.wait() == -signal.SIGKILL, "the gather ended before it could be killed"
    before = decisions(out)
    at_kill = load_suite(out)
    resumed = run_evalkit("gather", shop, "--out", out, "--concurrency", "1", *OPTIONS)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    return out, before, at_kill, resumed


def test_a_killed_gather_keeps_its_decisions_and_a_valid_suite(killed_and_resumed):
    _, before, at_kill, _ = killed_and_resumed
    assert 4 <= len(before) < 6
    stages = [json.loads(line)["stage"] for line in before]
    assert stages[:3] == ["history"] * 3 and stages[3] == "validation"
    assert not at_kill.skipped  # no task folder half-written


def test_the_same_command_again_continues_without_deciding_a_commit_twice(killed_and_resumed):
    out, before, _, resumed = killed_and_resumed
    after = decisions(out)
    assert after[: len(before)] == before
    shas = [json.loads(line)["sha"] for line in after]
    assert len(shas) == len(set(shas)) == 6
    assert f"{len(before)} commits decided by an earlier gather" in resumed.stdout
    report = json.loads((out / "gather-report.json").read_text())
    assert report["session"]["decided_before"] == len(before)
    assert report["session"]["validated"] == 3 - (len(before) - 3)
    assert report["funnel"] | {"survival": None} == {
        "scanned": 6, "screened_out": 3, "candidates": 3, "validated": 3, "accepted": 2, "kept": 2,
        "rejected_by_stage": {"history": 3, "validation": 1}, "survival": None,
        # the rejected one's tests ran too (they already passed): its environment worked
        "environment_ran": 3, "environment_failed": 0, "environment_rate": 1.0,
        "environment_losses": {}, "environment_repaired": 0,
    }  # fmt: skip
    assert sorted(suite_of(out)[0]) == sorted(EXPECTED_TASK_SUBJECTS)


def test_two_side_by_side_give_the_suite_of_one_at_a_time(killed_and_resumed, shop, tmp_path):
    one_at_a_time, _, _, _ = killed_and_resumed
    side_by_side = run_evalkit("gather", shop, "--out", tmp_path / "two", "--concurrency", "2", *OPTIONS)
    assert side_by_side.returncode == 0, side_by_side.stderr[-3000:]
    assert suite_of(tmp_path / "two") == suite_of(one_at_a_time)
    assert "funnel: 6 commits → 3 candidates → 3 validated → 2 accepted (67% survive) → 2 kept" in side_by_side.stdout


def test_max_tasks_keeps_the_newest_accepted_commits_whatever_the_concurrency(shop, tmp_path):
    ran = run_evalkit("gather", shop, "--out", tmp_path, "--concurrency", "2", "--max-tasks", "1", *OPTIONS)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert list(suite_of(tmp_path)[0]) == ["feat(shipping): estimate shipping by weight"]
    folders = [p.name for p in tmp_path.iterdir() if (p / "task.toml").exists()]
    assert folders == [load_suite(tmp_path).tasks[0].id]  # a task validated beside it and accepted is not kept
