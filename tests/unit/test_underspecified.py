"""A task whose tests need a name its prompt does not give: found on a repository built with git
(no Docker), flagged in the task's metadata, and shown by `tasks validate`, `stats` and the
leaderboard's suite figures."""

import io
import json
import subprocess

from conftest import DEMO_SUITE
from rich.console import Console
from stock_repo import build_stock_repo

from evalkit.diffs import DEFAULT_TEST_GLOBS
from evalkit.gather.history import commits, split_commit
from evalkit.gather.task_prompt import task_prompt
from evalkit.report.leaderboard.board import _suite_stats
from evalkit.stats.stats_command import stats_command
from evalkit.tasks import load_suite
from evalkit.tasks.write import write_suite
from evalkit.verify.correctness import CorrectnessResult
from evalkit.verify.health import assess_health


def test_a_new_method_absent_from_the_subject_is_in_the_interface_and_a_dynamic_name_is_flagged(tmp_path):
    repo = build_stock_repo(tmp_path / "stock")
    commit = commits(repo)[0]
    made = task_prompt(repo, commit.parent, commit.sha, commit.message, split_commit(repo, commit, DEFAULT_TEST_GLOBS))
    assert made.prompt.startswith("Hold stock during checkout. The work is in `shop/stock.py`, around `Stock.reserve`.")
    assert "- `def Stock.reserve(self, sku, n, *, hold_minutes=15)`: Hold `n` units for a checkout;" in made.prompt
    assert "self.items[sku] -= n" not in made.prompt
    assert made.underspecified == ["last_hold"] and made.metadata["underspecified"] == "last_hold"
    assert made.metadata["interface"] == "reserve"
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""


def test_the_flag_shows_in_validation_stats_and_the_leaderboard(tmp_path):
    demo = load_suite(DEMO_SUITE)
    vague = demo.tasks[0].model_copy(update={"metadata": {"underspecified": "last_hold, offset"}})
    write_suite(tmp_path / "s", "s", "two tasks", [vague, demo.tasks[1]])
    assert vague.underspecified == ["last_hold", "offset"] and demo.tasks[1].underspecified == []
    resolved = CorrectnessResult(task_id=vague.id, resolved=True, patch_applied=True)
    health = assess_health(vague, [resolved], CorrectnessResult(task_id=vague.id, patch_applied=True), 1.0)
    assert health.underspecified == ["last_hold", "offset"]
    out = io.StringIO()
    assert stats_command(tmp_path / "s", True, None, Console(file=out, width=250)) == 0
    assert json.loads(out.getvalue())["suite"]["underspecified"] == [vague.id]
    out = io.StringIO()
    stats_command(tmp_path / "s", False, None, Console(file=out, width=250))
    assert (
        f"1 task of 2 underspecified (the tests need names the prompt does not give); first: {vague.id}"
        in out.getvalue()
    )
    stats, _, _ = _suite_stats(str(tmp_path / "s"))
    assert stats.underspecified == {vague.id: "last_hold, offset"}
