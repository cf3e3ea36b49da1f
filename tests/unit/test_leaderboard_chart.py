"""The leaderboard's trade-off chart and error counts in its data: the x axis falls back to
median completion tokens when no model costs anything (local models, evalkit's built-in ones),
the Pareto frontier follows the axis shown, and attempts that ended in an endpoint or harness error
are counted per row from results.jsonl and kept out of the tokens and the frontier. Real run
folders scored by `score_run` (no Docker, no browser); the page itself is checked in
tests/integration/test_leaderboard_legibility.py."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from leaderboard_fixtures import DOWN, OK, two_task_suite, write_run

from evalkit.report.leaderboard.output import SCRIPT_PARTS, page_script, write_leaderboard

LOST = {"stop": "sandbox_error", "error": "ConnectionError: engine gone", "completion": 0, "final": None}


def attempts(completion: int, *kinds: dict) -> list[list[dict]]:
    """Two tasks × two samples, each attempt `completion` tokens unless it ended in an error."""
    cells = [kind if kind.get("stop") else {**kind, "completion": completion} for kind in kinds]
    return [cells[:2], cells[2:]]


def board(toy_suite_dir: Path, tmp_path: Path, plan: dict) -> dict:
    suite = two_task_suite(toy_suite_dir, tmp_path)
    run = write_run(tmp_path / "runs", suite, "r", plan)
    write_leaderboard([run], tmp_path / "out")
    (suite_board,) = json.loads((tmp_path / "out" / "leaderboard.json").read_text())["suites"]
    with (tmp_path / "out" / "leaderboard.csv").open() as lines:
        suite_board["csv"] = {row["model"]: row for row in csv.DictReader(lines)}  # for the CSV's view of the same rows
    return suite_board


@pytest.fixture(scope="module")
def local(toy_suite_dir, tmp_path_factory) -> dict:
    """Models served locally: every cost is $0 (API id `null`, evalkit's built-in model)."""
    return board(
        toy_suite_dir,
        tmp_path_factory.mktemp("local"),
        {
            "big": ("null", attempts(3000, OK, OK, OK, OK)),
            "small": ("null", attempts(1000, OK, OK, {}, {})),
            "chatty": ("null", attempts(2000, OK, OK, {}, {})),
            "flaky": ("null", attempts(1500, DOWN, OK, LOST, DOWN)),
            "dead": ("null", attempts(0, DOWN, DOWN, DOWN, DOWN)),
        },
    )


def rows(suite_board: dict) -> dict[str, dict]:
    return {row["label"]: row for row in suite_board["models"]}


def test_with_every_cost_zero_the_chart_shows_completion_tokens(local):
    costs = {row["label"]: row["cost_per_attempt"] for row in local["models"]}
    assert costs.pop("dead") is None  # nothing scored: no cost per attempt
    assert set(costs.values()) == {0}
    assert local["chart_x"] == "tokens"
    assert rows(local)["big"]["median_completion_tokens"] == 3000
    assert rows(local)["small"]["median_completion_tokens"] == 1000


def test_the_frontier_follows_the_tokens_axis(local):
    # fewest tokens for 50 %, then flaky: its one scored attempt resolved (errored ones are not scored)
    assert local["frontier"] == ["small", "flaky"]
    assert not rows(local)["big"]["pareto"]  # 100 % too, with more tokens
    assert not rows(local)["chatty"]["pareto"]  # as good as small, with more tokens


def test_errors_are_counted_per_row_from_the_results(local):
    by_label = rows(local)
    assert by_label["flaky"]["error_kinds"] == {"endpoint_error": 2, "sandbox_error": 1}
    assert by_label["dead"]["error_kinds"] == {"endpoint_error": 4}
    assert all(not by_label[m]["error_kinds"] for m in ("big", "small", "chatty"))
    assert by_label["flaky"]["median_completion_tokens"] == 1500  # its one attempt that reached the model
    assert by_label["dead"]["median_completion_tokens"] is None
    flaky_csv = local["csv"]["flaky"]
    assert flaky_csv["error_attempts"] == "3" and float(flaky_csv["median_completion_tokens"]) == 1500


def test_a_model_with_a_price_keeps_the_cost_axis(toy_suite_dir, tmp_path):
    priced = board(
        toy_suite_dir,
        tmp_path,
        {
            "gpt-4o-mini": ("gpt-4o-mini", attempts(1000, OK, OK, {}, {})),
            "local": ("null", attempts(900, OK, {}, {}, {})),
        },
    )
    assert priced["chart_x"] == "cost"
    assert priced["frontier"] == ["local", "gpt-4o-mini"]  # $0 and 25 %, then dearer and 50 %


def test_a_model_whose_every_attempt_failed_at_the_endpoint_is_off_the_frontier(toy_suite_dir, tmp_path):
    priced = board(
        toy_suite_dir,
        tmp_path,
        {"gpt-4o-mini": ("gpt-4o-mini", attempts(1000, OK, {}, {}, {})), "down": ("gpt-4o", attempts(0, *[DOWN] * 4))},
    )
    down = rows(priced)["down"]
    assert down["cost_per_attempt"] is None and down["error_kinds"] == {"endpoint_error": 4}
    assert not down["pareto"] and priced["frontier"] == ["gpt-4o-mini"]  # at $0 it would be the cheapest point


def test_the_page_script_is_every_part_in_one_function_scope():
    script = page_script()
    assert script.startswith('(() => {\n"use strict";') and script.endswith("})();\n")
    positions = [script.index(f"// ---- {name}\n") for name in SCRIPT_PARTS]
    assert positions == sorted(positions)  # the helpers before their users, page.js last
    assert script.count("window.__evalkitAttempt =") == 1
