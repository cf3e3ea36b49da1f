"""An attempt that ended in `endpoint_error` or `sandbox_error` says nothing about the model: it
is counted as an error and left out of every figure (resolved rate, pass@k, the axes, cost), and a
model whose every attempt errored has no score at all, never 0 %. Real run folders scored by
`score_run`, as in test_leaderboard (no Docker)."""

from __future__ import annotations

import json

import pytest
from rich.console import Console
from test_leaderboard import make_run, two_task_suite

from evalkit.runs.display import errors_line, summary_table

OK, FAIL = {"resolved": True}, {}
DOWN = {"stop": "endpoint_error", "error": "gave up after 7 failed request(s)", "final": None, "tokens": 50_000}
# an endpoint that died after the agent had written the right change: still an error, not a success
DIED_LATE = {**DOWN, "resolved": True, "tests_resolved": True}
LOST = {"stop": "sandbox_error", "error": "could not open a sandbox", "final": None}


@pytest.fixture(scope="module")
def summary(toy_suite_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("errors")
    suite = two_task_suite(toy_suite_dir, root)
    plan = {
        "clean": ("gpt-4o", [[OK, FAIL], [OK, FAIL]]),
        "flaky": ("gpt-4o", [[OK, DOWN], [FAIL, DIED_LATE]]),
        "dead": ("gpt-4o", [[DOWN, LOST], [DOWN, DOWN]]),
    }
    run = make_run(root / "runs", suite, "errors", plan, samples=2)
    data = json.loads((run / "summary.json").read_text())
    return data | {"by_model": {entry["model"]: entry for entry in data["models"]}, "run_dir": run}


def test_errored_attempts_are_counted_per_model_and_kind(summary):
    flaky, dead = summary["by_model"]["flaky"], summary["by_model"]["dead"]
    assert (flaky["attempts"], flaky["scored_attempts"], flaky["errors"]) == (4, 2, 2)
    assert flaky["error_kinds"] == {"endpoint_error": 2}
    assert dead["error_kinds"] == {"endpoint_error": 3, "sandbox_error": 1} and dead["scored_attempts"] == 0
    assert summary["by_model"]["clean"]["errors"] == 0
    assert summary["errors"] == 6 and summary["error_kinds"] == {"endpoint_error": 5, "sandbox_error": 1}


def test_errored_attempts_are_in_no_figure(summary):
    clean, flaky = summary["by_model"]["clean"], summary["by_model"]["flaky"]
    assert clean["resolved_rate"]["mean"] == 0.5
    # one scored attempt per task: resolved on the first, not on the second; the late death is not a success
    assert flaky["resolved"] == 1 and flaky["resolved_rate"]["mean"] == 0.5
    assert (flaky["tasks"], flaky["samples"], list(flaky["pass_at_k"])) == (2, 1, ["1"])
    assert flaky["median_tokens"] == 12_000  # the errored attempts' 50,000 tokens are not in it
    for axis in ("quality", "efficiency", "interaction", "composite"):
        assert flaky["axes"][axis]["mean"] == clean["axes"][axis]["mean"], axis  # the same scored attempts
    assert flaky["stop_reasons"] == {"submitted": 2, "endpoint_error": 2}  # what happened is still told


def test_a_model_whose_every_attempt_errored_has_no_score(summary):
    dead = summary["by_model"]["dead"]
    assert dead["resolved_rate"] == {"mean": None, "ci95": None}
    assert all(dead["axes"][axis]["mean"] is None for axis in ("quality", "efficiency", "interaction", "composite"))
    assert dead["pass_at_k"] == {} and dead["cost_per_task"] is None and dead["median_tokens"] is None


def test_the_terminal_shows_error_not_zero_and_says_how_to_rerun(summary):
    console = Console(record=True, width=250, file=None)
    console.print(summary_table(summary["models"], "run"))
    rows = {line.split()[0]: line for line in console.export_text().splitlines() if line.strip()}
    assert "error" in rows["dead"] and "0.0%" not in rows["dead"]
    assert "50.0%" in rows["flaky"]
    assert errors_line(summary, "evalkit run --run-id errors --retry-errors") == (
        "6 errors: endpoint_error ×5, sandbox_error ×1 — not scored; "
        "run them again with `evalkit run --run-id errors --retry-errors`"
    )
    assert errors_line({"error_kinds": {}}, "x") is None


def test_the_python_api_marks_the_errored_attempts(summary):
    from evalkit import load_results

    frame = load_results(summary["run_dir"])
    errored = frame[frame["errored"]]
    assert sorted(errored["model"]) == ["dead"] * 4 + ["flaky"] * 2
    assert set(errored["stop_reason"]) == {"endpoint_error", "sandbox_error"}
