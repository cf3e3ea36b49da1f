"""Contamination control: a model's `knowledge_cutoff` is validated, travels in run.json, and the run
summary, the leaderboard and `evalkit compare` show its resolved rate on the tasks committed after
it beside the all-tasks rate; without a cutoff they show what they showed before.

The runs are real run folders (leaderboard_fixtures.write_run, scored by `score_run`) over copies of
the toy task dated before, in and after June 2025, and one undated."""

from __future__ import annotations

import csv
import io
import json
import shutil
from functools import partial
from pathlib import Path

import pytest
from conftest import run_evalkit
from leaderboard_fixtures import DOWN, OK, write_run
from rich.console import Console

from evalkit.cutoff import CutoffSplit, ResolvedAttempt, cutoff_splits, cutoff_text, last_day
from evalkit.errors import EvalkitError
from evalkit.models.endpoint import read_config, resolve_model
from evalkit.report.compare.command import compare_command
from evalkit.report.leaderboard.output import write_leaderboard
from evalkit.runs.display import cutoff_lines, summary_table
from evalkit.runs.resume import model_specs
from evalkit.runs.settings import ModelChoice, RunSettings
from evalkit.runs.store import RunManifest

evalkit = partial(run_evalkit, timeout=300)

# task → its commit's author date, as gather writes it (None: a bundled task without one)
DATES = {
    "before": "2025-05-31T23:00:00+02:00",
    "in-month": "2025-06-30T23:59:59-07:00",  # already July in UTC: the date as written counts
    "after": "2025-07-01T00:30:00+02:00",  # still June in UTC: likewise
    "later": "2025-09-10T08:00:00Z",
    "undated": None,
}
TASK_IDS = tuple(DATES)
# per task, per sample: gpt-4o resolves before 2/2, in-month 1/2, after 1/2 (and errors a third
# time), later 0/2, undated 2/2; qwen resolves all but after's second sample and undated
GPT = [[OK, OK], [OK, {}], [OK, {}, DOWN], [{}, {}], [OK, OK]]
QWEN = [[OK, OK], [OK, OK], [OK, {}], [OK, OK], [{}, {}]]
GPT_SPLIT = {"cutoff": "2025-06", "tasks": 5, "resolved_rate": 0.6, "after_tasks": 2, "after_rate": 0.25}
GPT_SPLIT |= {"undated_tasks": 1}  # (1 + .5 + .5 + 0 + 1) / 5 in all; (.5 + 0) / 2 after June


def dated_suite(toy_suite_dir: Path, root: Path) -> Path:
    """The toy task copied once per entry of DATES, each with its `metadata.commit_date`."""
    suite = root / "suite"
    shutil.copytree(toy_suite_dir, suite)
    for task_id, date in DATES.items():
        folder = suite / task_id
        shutil.copytree(suite / "calc-power", folder)
        if date:
            with (folder / "task.toml").open("a") as toml:
                toml.write(f'\n[metadata]\ncommit_date = "{date}"\n')
    shutil.rmtree(suite / "calc-power")
    return suite


@pytest.fixture(scope="module")
def runs(toy_suite_dir, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cutoff")
    suite = dated_suite(toy_suite_dir, root)
    run = partial(write_run, root / "runs", suite, task_ids=TASK_IDS)
    return {
        "base": run("base", {"gpt-4o": ("gpt-4o", GPT)}, cutoffs={"gpt-4o": "2025-06"}),
        "new": run("new", {"qwen": ("qwen", QWEN)}, cutoffs={"qwen": "2025-08"}),
        "plain-base": run("plain-base", {"gpt-4o": ("gpt-4o", GPT)}),
        "plain-new": run("plain-new", {"qwen": ("qwen", QWEN)}),
        "root": root,
    }


def summary_models(run_dir: Path) -> list[dict]:
    return json.loads((run_dir / "summary.json").read_text())["models"]


# -- the rule --------------------------------------------------------------------------------------
def test_a_cutoff_month_covers_the_whole_month_and_undated_tasks_are_counted_apart():
    attempts = [ResolvedAttempt(t, "m", r) for t, per in zip(TASK_IDS, GPT, strict=True) for r in _resolved(per)]
    attempts.append(ResolvedAttempt("garbled", "m", True))  # a date that does not parse: undated
    dates = {**DATES, "garbled": "last Tuesday"}
    split = cutoff_splits(attempts, dates, {"m": "2025-06", "no-cutoff": None})["m"]
    assert split == CutoffSplit(
        cutoff="2025-06", tasks=6, resolved_rate=0.6667, after_tasks=2, after_rate=0.25, undated_tasks=2
    )
    by_day = cutoff_splits(attempts, dates, {"m": "2025-06-29"})["m"]  # a date: in-month (the 30th) is after
    assert (by_day.after_tasks, by_day.after_rate) == (3, 0.3333)
    assert cutoff_splits(attempts, dates, {"m": "2025-09"})["m"].after_rate is None  # no task after it


def test_models_without_a_cutoff_get_no_split():
    assert cutoff_splits([ResolvedAttempt("before", "m", True)], DATES, {"m": None, "other": "2025-06"}) == {}


def test_cutoff_forms():
    assert last_day("2024-02") == last_day("2024-02-29")
    assert cutoff_text("2025-06") == "2025-06"
    for bad in ("2025-6", "2025-13", "June 2025", "2025-02-30", 2025):
        with pytest.raises(ValueError, match=r'^must be a year-month \("2025-06"\) or a date'):
            cutoff_text(bad)


def _resolved(per_sample: list[dict]) -> list[bool]:
    """A plan's samples as the scored outcomes (errored ones left out, as the caller does)."""
    return [kind.get("resolved", False) for kind in per_sample if kind is not DOWN]


# -- configuration ----------------------------------------------------------------------------------
def test_the_cutoff_is_read_from_the_config_and_recorded_with_the_model(tmp_path):
    config = tmp_path / "evalkit.toml"
    config.write_text('[models.a]\nknowledge_cutoff = "2025-06"\n[models.b]\nknowledge_cutoff = 2025-06-15\n')
    models = read_config(config)
    assert resolve_model("a", models, config_path=config).public()["knowledge_cutoff"] == "2025-06"
    assert resolve_model("b", models, config_path=config).public()["knowledge_cutoff"] == "2025-06-15"
    assert "knowledge_cutoff" not in resolve_model("c", models).public()  # run.json as before without one


def test_a_bad_cutoff_in_the_config_is_one_line_naming_file_and_field(tmp_path):
    config = tmp_path / "evalkit.toml"
    config.write_text('[models.a]\nknowledge_cutoff = "mid 2025"\n')
    with pytest.raises(EvalkitError) as caught:
        resolve_model("a", read_config(config), config_path=config)
    assert str(caught.value) == (
        f"{config}: [models.a] `knowledge_cutoff`: "
        'must be a year-month ("2025-06") or a date ("2025-06-15"), got \'mid 2025\''
    )


def test_a_bad_cutoff_stops_evalkit_run_with_exit_2_and_no_traceback(tmp_path):
    from toy import write_toy_suite

    config = tmp_path / "evalkit.toml"
    config.write_text('[models.mine]\nbase_url = "http://127.0.0.1:9/v1"\nknowledge_cutoff = "2025-13"\n')
    result = evalkit("run", "--suite", write_toy_suite(tmp_path), "--model", "mine", "--config", config,
                     "--out", tmp_path / "runs")  # fmt: skip
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert line.endswith(
        f'{config}: [models.mine] `knowledge_cutoff`: must be a year-month ("2025-06") or a date '
        "(\"2025-06-15\"), got '2025-13'"
    )
    assert not (tmp_path / "runs").exists()


def test_a_resumed_run_may_learn_its_models_cutoff(tmp_path):
    config = tmp_path / "evalkit.toml"
    config.write_text('[models.a]\nbase_url = "http://127.0.0.1:9/v1"\nknowledge_cutoff = "2025-06"\n')
    before = resolve_model("a", {"a": {"base_url": "http://127.0.0.1:9/v1"}}).public()
    now = "2026-01-01T00:00:00+00:00"
    manifest = RunManifest(run_id="r", suite="toy", suite_path="s", tasks=[], models={"a": before}, samples=1,
                           created_at=now, updated_at=now)  # fmt: skip
    args = RunSettings(models=ModelChoice(names=["a"], config=config))
    (spec,) = model_specs(args, manifest, lambda name: resolve_model(name, read_config(config), config_path=config))
    assert spec.knowledge_cutoff == "2025-06"


# -- the run summary ----------------------------------------------------------------------------------
def test_the_summary_json_of_a_model_with_a_cutoff_has_its_split(runs):
    (entry,) = summary_models(runs["base"])
    assert entry["after_cutoff"] == GPT_SPLIT
    assert entry["resolved_rate"]["mean"] == 0.6 and entry["errors"] == 1  # the same tasks, errors left out
    (plain,) = summary_models(runs["plain-base"])
    assert "after_cutoff" not in plain


def test_the_summary_table_shows_after_cutoff_beside_resolved(runs):
    models = summary_models(runs["base"]) + summary_models(runs["plain-new"])
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(summary_table(models, "run"))
    lines = console.export_text().splitlines()
    header = next(line for line in lines if "resolved" in line)
    assert header.index("resolved") < header.index("after cutoff") < header.index("quality")
    assert "60.0% [" in _row(lines, "gpt-4o") and "25.0% (2 tasks)" in _row(lines, "gpt-4o")
    assert _row(lines, "qwen").split("]")[1].split()[0] == "-"  # no cutoff: no split
    assert cutoff_lines({"models": models}) == [
        "after cutoff: resolved on the tasks committed after the model's knowledge cutoff "
        "(gpt-4o: knowledge cutoff 2025-06, 1 task without a commit date left out)"
    ]


def test_without_a_cutoff_the_summary_and_its_table_are_as_before(runs):
    models = summary_models(runs["plain-base"])
    with_cutoff = summary_models(runs["base"])
    assert models == [{k: v for k, v in entry.items() if k != "after_cutoff"} for entry in with_cutoff]
    assert "after cutoff" not in _render(models) and cutoff_lines({"models": models}) == []


def test_evalkit_score_prints_the_split_under_and_in_the_table(runs):
    result = evalkit("score", runs["base"], env={"COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    row = lines.index(_row(lines, "gpt-4o"))  # the table is fitted to 160 columns: the cell takes two lines
    assert lines[row].split()[3:5] == ["[30%–90%]", "25.0%"] and lines[row + 1].split()[:2] == ["(2", "tasks)"]
    assert "(gpt-4o: knowledge cutoff 2025-06, 1 task without a commit date left out)" in result.stdout


def _render(models: list[dict]) -> str:
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(summary_table(models, "run"))
    return console.export_text()


def _row(lines: list[str], model: str) -> str:
    return next(line for line in lines if model in line and "%" in line)


# -- the leaderboard ----------------------------------------------------------------------------------
def test_the_leaderboard_rows_carry_the_split_and_the_page_a_column_for_it(runs):
    out = runs["root"] / "report"
    page = write_leaderboard([runs["base"], runs["plain-new"]], out)
    (suite,) = json.loads((out / "leaderboard.json").read_text())["suites"]
    rows = {row["model"]: row for row in suite["models"]}
    assert rows["gpt-4o"]["after_cutoff"] == GPT_SPLIT and "after_cutoff" not in rows["qwen"]
    table = {row["model"]: row for row in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))}
    assert [table["gpt-4o"][c] for c in ("knowledge_cutoff", "after_cutoff_rate", "after_cutoff_tasks")] == [
        "2025-06", "0.25", "2",
    ]  # fmt: skip
    assert table["qwen"]["after_cutoff_rate"] == ""
    text = page.read_text()
    assert '"after_cutoff":{"cutoff":"2025-06"' in text and 'label: "after cutoff"' in text


def test_without_a_cutoff_the_leaderboard_data_is_unchanged(runs):
    out = runs["root"] / "plain-report"
    write_leaderboard([runs["plain-base"], runs["plain-new"]], out)
    assert "after_cutoff" not in (out / "leaderboard.json").read_text()
    assert "cutoff" not in (out / "leaderboard.csv").read_text().splitlines()[0]


# -- compare ------------------------------------------------------------------------------------------
def _compare(base: Path, new: Path, tmp_path: Path) -> tuple[dict, str, str]:
    console = Console(record=True, width=300, file=io.StringIO())
    paths = {"json_out": tmp_path / "c.json", "markdown": tmp_path / "c.md"}
    compare_command(base, new, console=console, **paths)
    return json.loads(paths["json_out"].read_text()), console.export_text(), paths["markdown"].read_text()


def test_compare_shows_each_sides_rate_after_its_cutoff_over_the_paired_tasks(runs, tmp_path):
    result, text, markdown = _compare(runs["base"], runs["new"], tmp_path)
    resolved = next(axis for axis in result["axes"] if axis["axis"] == "resolved")
    assert (resolved["base"], resolved["new"]) == (0.6, 0.7)
    assert result["base_after_cutoff"] == GPT_SPLIT
    assert result["new_after_cutoff"] == {"cutoff": "2025-08", "tasks": 5, "resolved_rate": 0.7, "after_tasks": 1,
                                          "after_rate": 1.0, "undated_tasks": 1}  # fmt: skip
    base_line = (
        "base gpt-4o (knowledge cutoff 2025-06, 1 task without a commit date left out): "
        "resolved 60.0%, after cutoff: 25.0% (2 tasks)"
    )
    new_line = (
        "new qwen (knowledge cutoff 2025-08, 1 task without a commit date left out): "
        "resolved 70.0%, after cutoff: 100.0% (1 task)"
    )
    assert base_line in text and new_line in text
    assert f"- {base_line}\n- {new_line}\n" in markdown


def test_without_a_cutoff_compare_says_nothing_of_one(runs, tmp_path):
    result, text, markdown = _compare(runs["plain-base"], runs["plain-new"], tmp_path)
    assert not {"base_after_cutoff", "new_after_cutoff"} & result.keys()
    assert "cutoff" not in text and "cutoff" not in markdown
