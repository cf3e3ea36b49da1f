"""Agent and model apart on the leaderboard: a row per model and agent (the same model under two
agents is two rows), the agent in its own column of the data and both CSV files, the first
grouping chosen with `evalkit report --group-by`, and an agent's name (a command, so anything)
kept inert in the page. Real run folders scored by `score_run` (tests/leaderboard_fixtures.py)."""

from __future__ import annotations

import csv
import io
import json

import pytest
from conftest import run_evalkit
from leaderboard_fixtures import agent_runs

from evalkit.report.leaderboard.output import write_leaderboard

EVIL_AGENT = "command:echo '</script><script>window.pwned=1</script><img src=x onerror=alert(1)>' && my-agent --yes"


@pytest.fixture(scope="module")
def runs(toy_suite_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("agents")
    loop, agent = agent_runs(toy_suite_dir, root, EVIL_AGENT)
    return root, loop, agent


def board(root, *run_dirs, group_by="none"):
    page = write_leaderboard(list(run_dirs), root / f"out-{group_by}", group_by=group_by)
    return page, json.loads((page.parent / "leaderboard.json").read_text())


def test_each_model_under_each_agent_is_a_row_of_its_own(runs):
    root, loop, agent = runs
    _, data = board(root, loop, agent)
    (suite,) = data["suites"]
    rows = {(r["model"], r["agent"]): r for r in suite["models"]}
    assert sorted(rows) == sorted((m, a) for m in ("gpt-4o", "qwen") for a in ("tool-loop", EVIL_AGENT))
    assert rows[("gpt-4o", "tool-loop")]["resolved_rate"]["mean"] == 1.0
    assert rows[("gpt-4o", EVIL_AGENT)]["resolved_rate"]["mean"] == 0.5
    assert rows[("qwen", EVIL_AGENT)]["resolved_rate"]["mean"] == 0.0
    assert rows[("qwen", EVIL_AGENT)]["stop_reasons"] == {"submitted": 1, "agent_error": 1}  # a crash, scored
    assert rows[("qwen", EVIL_AGENT)]["errors"] == 0 and rows[("qwen", EVIL_AGENT)]["scored_attempts"] == 2
    assert data["group_by"] == "none"


def test_both_csv_files_have_the_agent_beside_the_model(runs):
    root, loop, agent = runs
    page, _ = board(root, loop, agent)
    table = list(csv.DictReader(io.StringIO((page.parent / "leaderboard.csv").read_text())))
    assert list(table[0])[1:3] == ["model", "agent"]
    assert {(r["model"], r["agent"], r["run_id"]) for r in table} == {
        (m, a, run) for m in ("gpt-4o", "qwen") for a, run in (("tool-loop", "loop"), (EVIL_AGENT, "agent"))
    }
    attempts = list(csv.DictReader(io.StringIO((page.parent / "attempts.csv").read_text())))
    assert {(r["run_id"], r["agent"]) for r in attempts} == {("loop", "tool-loop"), ("agent", EVIL_AGENT)}


@pytest.mark.parametrize("group_by", ["agent", "model"])
def test_the_first_grouping_is_in_the_page_data(runs, group_by):
    root, loop, agent = runs
    page, data = board(root, loop, agent, group_by=group_by)
    assert data["group_by"] == group_by
    assert '"group_by":"' + group_by + '"' in page.read_text()


def test_an_agent_named_with_markup_stays_data(runs):
    root, loop, agent = runs
    page, _ = board(root, loop, agent, group_by="agent")
    html = page.read_text()
    assert "window.pwned" in html  # the name is there, as JSON...
    assert "<script>window.pwned" not in html and "<img src=x" not in html  # ...never as markup


def test_report_refuses_an_unknown_grouping_in_one_line(runs):
    root, loop, _ = runs
    result = run_evalkit("report", loop, "--out", root / "bad", "--group-by", "task", timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip() == "error: --group-by 'task': give one of none, agent, model"
    assert not (root / "bad").exists()
    good = run_evalkit("report", loop, "--out", root / "good", "--group-by", "model", timeout=120)
    assert good.returncode == 0, good.stderr
    assert json.loads((root / "good" / "leaderboard.json").read_text())["group_by"] == "model"
