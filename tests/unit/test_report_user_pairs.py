"""The leaderboard and `evalkit compare` over two runs of one suite that differ only by the
simulated user (issue 19): both resolved figures side by side, the ask rate and the informative
share, the simulator's cost apart; compare names the user condition and pairs the runs as usual.
The run folders are real: rows written by hand, scored by `score_run` (no Docker)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from leaderboard_fixtures import OK, USER_EVIL, asked, user_runs, write_run
from rich.console import Console

from evalkit.report.compare.command import compare_command
from evalkit.report.leaderboard.output import write_leaderboard


@pytest.fixture(scope="module")
def runs(toy_suite_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("user")
    return (root, *user_runs(toy_suite_dir, root))


def board(root, *run_dirs, out="out"):
    page = write_leaderboard(list(run_dirs), root / out)
    return page, json.loads((page.parent / "leaderboard.json").read_text())


def test_the_leaderboard_shows_both_conditions_side_by_side(runs):
    root, alone, with_user, _ = runs
    page, data = board(root, alone, with_user)
    rows = {row["run_id"]: row for row in data["suites"][0]["models"]}
    assert rows["asked"]["user"] == "simulated" and rows["alone"]["user"] is None
    for run, other in (("asked", "alone"), ("alone", "asked")):
        assert rows[run]["user_pair"] == {"other_run": other, "tasks": 2, "with_user": 1.0, "without_user": 0.5}
    figures = rows["asked"]["user_figures"]
    assert figures["ask_rate"] == 1.0 and figures["questions_per_attempt"] == 1.5
    assert figures["informative_share"] == pytest.approx(2 / 3, abs=1e-4)
    assert rows["alone"]["user_figures"] is None  # no user: not applicable, not 0
    table = {r["run_id"]: r for r in csv.DictReader(io.StringIO((page.parent / "leaderboard.csv").read_text()))}
    assert (table["asked"]["resolved_with_user"], table["asked"]["resolved_without_user"]) == ("1.0", "0.5")
    assert table["asked"]["ask_rate"] == "1.0" and table["alone"]["ask_rate"] == ""


def test_the_simulators_cost_is_apart_from_the_agents(runs):
    root, alone, with_user, _ = runs
    _, data = board(root, alone, with_user)
    rows = {row["run_id"]: row for row in data["suites"][0]["models"]}
    # same agent tokens in both runs: same agent cost; the user's 2 × 1M prompt tokens at gpt-4o-mini's price
    assert rows["asked"]["cost_usd"] == rows["alone"]["cost_usd"]
    assert rows["asked"]["user_figures"]["cost_usd"] == pytest.approx(2 * 0.15)
    summary = json.loads((with_user / "summary.json").read_text())
    assert summary["models"][0]["user"]["cost_usd"] == pytest.approx(0.3)
    assert summary["models"][0]["user"]["questions"] == 3
    assert summary["interaction_penalties"]["redundant_question"] == 0.05
    scores = [json.loads(line) for line in (with_user / "scores.jsonl").read_text().splitlines()]
    second = next(s for s in scores if s["task_id"] == "calc-power-again")
    assert second["interaction"]["counts"]["redundant_question"] == 1


def test_runs_that_differ_in_more_than_the_user_are_not_paired(runs):
    root, alone, _, _ = runs
    suite = json.loads((alone / "run.json").read_text())["suite_path"]
    never = OK | asked({})  # a user it did not ask, on two samples per task (the other run has one)
    more = write_run(root / "more", Path(suite), "more", {"gpt-4o": ("gpt-4o", [[never, never], [never, never]])})
    _, data = board(root, alone, more, out="out-more")
    rows = {row["run_id"]: row for row in data["suites"][0]["models"]}
    assert rows["more"]["user_pair"] is None and rows["alone"]["user_pair"] is None
    assert rows["more"]["user_figures"]["ask_rate"] == 0.0 and rows["more"]["user_figures"]["informative_share"] is None


def test_a_user_model_named_with_markup_stays_text(runs):
    root, _, _, evil = runs
    page, data = board(root, evil, out="out-evil")
    assert data["suites"][0]["models"][0]["user_figures"]["user_model"] == USER_EVIL
    html = page.read_text()
    assert "window.pwned" in html  # there, as JSON...
    assert "<script>window.pwned" not in html and "<img src=x" not in html  # ...never as markup


def test_compare_names_the_user_condition_and_pairs_the_runs(runs, tmp_path):
    _, alone, with_user, _ = runs
    console = Console(record=True, width=300, file=io.StringIO())
    out = tmp_path / "compare.json"
    code = compare_command(alone, with_user, console=console, json_out=out)
    text = console.export_text()
    result = json.loads(out.read_text())
    assert code == 0 and result["pairs"] == 2
    assert result["base_user"] is None and result["new_user"] == "simulated (gpt-4o-mini)"
    assert "differ in the simulated user: base without a user, new with a simulated (gpt-4o-mini) user" in text
    assert "(gpt-4o without a user) → new asked (gpt-4o with a simulated (gpt-4o-mini) user)" in text
    assert result["axes"][0]["axis"] == "resolved" and result["axes"][0]["new_only"] == 1
