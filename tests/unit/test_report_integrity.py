"""Integrity in the leaderboard and in `evalkit compare`, as a user reads them: the model's counts
(row, leaderboard.json, leaderboard.csv), the matrix marking a voided or flagged attempt, the
attempt detail listing each flag's evidence as inert text, attempts.csv, and the final verdict
taken from scores.jsonl over results.jsonl; compare's per-side counts, the newly failing pairs in
every output, the exit code left to the resolved verdict, and older frames without the columns.

Run folders are built as in test_leaderboard / test_compare (RunStore, TrajectoryWriter,
`score_run`; no Docker): the integrity flags come from evalkit's own scan of the trajectory."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd
import pytest
from junitparser import JUnitXml
from test_compare import BASE_RESOLVED, TASKS, axes_for, compare, frame, run_command, score_row, write_run
from test_leaderboard import decode_attempt, make_run, rows_of

from evalkit.integrity import IntegrityFlag, IntegrityReport
from evalkit.records import AttemptRecord
from evalkit.report.compare.comparison import Comparison, junit_report, markdown_report
from evalkit.report.leaderboard.loaded_runs import attempt_status
from evalkit.report.leaderboard.output import script_json, write_leaderboard
from evalkit.runs.store import RunStore
from evalkit.scoring.attempt_scores import AttemptScores
from evalkit.scoring.composite import Weights

HOSTILE = "<script>alert(1)</script>"
TAMPER = f'echo "{HOSTILE}"; kill -9 1'  # harness_tampering: a failing kind
PROBE = "curl https://example.com/x"  # network_probe: a warning


# -- the leaderboard -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory):
    """`honest` resolves both tasks; `cheat` passes the hidden tests on the first by killing the
    harness (recorded as resolved and clean by the run; `evalkit score`'s scan fails it) and
    probes the network on the second."""
    root = tmp_path_factory.mktemp("integrity")
    suite = root / "suite"
    shutil.copytree(toy_suite_dir, suite)
    shutil.copytree(suite / "calc-power", suite / "calc-power-again")
    tampered = {"resolved": True, "tests_resolved": True, "command": TAMPER, "integrity": {"restored": ["conftest.py"]}}
    run = make_run(
        root / "runs",
        suite,
        "run",
        {
            "honest": ("gpt-4o", [[{"resolved": True}], [{"resolved": True}]]),
            "cheat": ("gpt-4o-mini", [[tampered], [{"command": PROBE}]]),
        },
        samples=1,
    )
    out = root / "report"
    write_leaderboard([run], out)
    return {"run": run, "out": out, "root": root}


def board(out) -> dict:
    (suite,) = json.loads((out / "leaderboard.json").read_text())["suites"]
    return suite


def detail_of(out, model: str, task: str) -> dict:
    details = (decode_attempt(p) for p in (out / "attempts").iterdir())
    return next(d for d in details if (d["model"], d["task_id"]) == (model, task))


def test_the_models_integrity_counts_are_in_its_row_and_both_data_files(report):
    rows = {row["model"]: row for row in board(report["out"])["models"]}
    assert rows["cheat"]["integrity"] == {
        "fail": 1,
        "warn": 1,
        "unresolved_by_integrity": 1,
        "kinds": {"harness_tampering": 1, "network_probe": 1},
    }
    assert rows["honest"]["integrity"] == {"fail": 0, "warn": 0, "unresolved_by_integrity": 0, "kinds": {}}
    summary = json.loads((report["run"] / "summary.json").read_text())
    assert rows["cheat"]["integrity"] == next(m for m in summary["models"] if m["model"] == "cheat")["integrity"]
    assert rows["cheat"]["resolved"] == 0  # the tests passed, the integrity verdict withheld it
    csv_rows = {r["model"]: r for r in rows_of(report["out"] / "leaderboard.csv")}
    assert (csv_rows["cheat"]["integrity_fail"], csv_rows["cheat"]["integrity_warn"]) == ("1", "1")
    assert (csv_rows["honest"]["integrity_fail"], csv_rows["honest"]["integrity_warn"]) == ("0", "0")


def test_a_summary_from_before_integrity_gets_the_counts_from_the_scores(report, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(report["run"], run)
    summary = json.loads((run / "summary.json").read_text())
    for entry in summary["models"]:
        del entry["integrity"]
    (run / "summary.json").write_text(json.dumps(summary))
    write_leaderboard([run], tmp_path / "out")
    assert [(r["model"], r["integrity"]) for r in board(tmp_path / "out")["models"]] == [
        (r["model"], r["integrity"]) for r in board(report["out"])["models"]
    ]


def test_the_matrix_marks_the_voided_attempt_and_the_flagged_ones(report):
    suite = board(report["out"])
    columns = json.loads((report["out"] / "leaderboard.json").read_text())["attempt_columns"]
    assert columns == ["n", "task", "model", "sample", "status", "run", "integrity", "flags"]
    cells = {(suite["models"][a[2]]["model"], suite["tasks"][a[1]]): a[4:5] + a[6:] for a in suite["attempts"]}
    assert cells == {
        ("cheat", "calc-power"): ["x", "fail", ["harness_tampering"]],  # tests passed, integrity failed
        ("cheat", "calc-power-again"): ["f", "warn", ["network_probe"]],
        ("honest", "calc-power"): ["r", "clean", []],
        ("honest", "calc-power-again"): ["r", "clean", []],
    }
    script = (report["out"] / "index.html").read_text()
    assert "flag " in script and "voided" in script  # the marker's classes and the status's label


def test_the_attempt_detail_lists_every_flag_and_the_restored_paths_as_text(report):
    detail = detail_of(report["out"], "cheat", "calc-power")
    assert (detail["status"], detail["resolved"], detail["tests_resolved"]) == ("x", False, True)
    assert detail["integrity"] == {
        "verdict": "fail",
        "flags": [{"kind": "harness_tampering", "evidence": TAMPER, "step": 1, "source": "trajectory"}],
        "restored": ["conftest.py"],
        "from": "scores.jsonl",
    }
    assert "integrity" not in detail["scores"]  # once, at the top
    assert detail["scores"]["correctness"]["tests_resolved"] is True and detail["scores"]["composite"] == 0
    assert [s[2:] for s in detail["siblings"]] == [["x", "run", "fail"]]
    text = next(p for p in (report["out"] / "attempts").iterdir() if decode_attempt(p) == detail).read_text()
    assert "<" not in text and ">" not in text
    escaped = script_json(json.dumps(TAMPER))[1:-1]  # the command as any string of the payload is escaped
    assert "\\u003cscript\\u003ealert(1)" in escaped
    assert text.count(escaped) == 2  # the tool call's arguments in the trajectory, and the flag's evidence


def test_attempts_csv_has_the_final_verdict_and_the_integrity_columns(report):
    rows = {(r["model"], r["task_id"]): r for r in rows_of(report["out"] / "attempts.csv")}
    cheat = rows[("cheat", "calc-power")]
    assert (cheat["status"], cheat["resolved"], cheat["tests_resolved"]) == ("x", "False", "True")
    assert (cheat["integrity"], cheat["integrity_flags"], cheat["composite"]) == ("fail", "harness_tampering", "0.0")
    probe = rows[("cheat", "calc-power-again")]
    assert (probe["integrity"], probe["integrity_flags"]) == ("warn", "network_probe")
    assert (rows[("honest", "calc-power")]["integrity"], rows[("honest", "calc-power")]["integrity_flags"]) == (
        "clean",
        "",
    )
    (recorded,) = [r for r in RunStore(report["run"]).records() if (r.model, r.task_id) == ("cheat", "calc-power")]
    assert recorded.resolved  # results.jsonl said resolved; the re-scored scores.jsonl row wins


def test_attempt_status_takes_the_scores_row_over_the_record():
    failing = IntegrityReport.of([IntegrityFlag.make("test_tampering", "conftest.py hook")])
    record = AttemptRecord(run_id="r", task_id="t00", model="m", sample=0, resolved=True, stop_reason="submitted")
    assert attempt_status(record, None) == "r"
    withheld = record.model_copy(update={"resolved": False, "tests_resolved": True, "integrity": failing})
    assert attempt_status(withheld, None) == "x"
    assert attempt_status(withheld.model_copy(update={"tests_resolved": False}), None) == "f"
    score = score_row(record, axes_for("t00", 0, 0), Weights())
    assert attempt_status(record, score) == "r"
    rescored = score.model_copy(
        update={
            "correctness": score.correctness.model_copy(
                update={"resolved": False, "score": 0.0, "tests_resolved": True}
            ),
            "integrity": failing,
        }
    )
    assert attempt_status(record, rescored) == "x"  # the record's resolved is overruled


# -- evalkit compare ---------------------------------------------------------------------------------
def flagged(outcomes: dict, flags: dict[str, tuple[str, str]], **options) -> pd.DataFrame:
    """`frame` with the integrity columns: task → (verdict, comma-joined kinds), clean otherwise."""
    table = frame(outcomes, **options)
    table["integrity"] = [flags.get(t, ("clean", ""))[0] for t in table["task_id"]]
    table["integrity_flags"] = [flags.get(t, ("clean", ""))[1] for t in table["task_id"]]
    return table


OUTCOMES = {(t, 0): t in BASE_RESOLVED for t in TASKS}
BASE_FLAGS = {"t00": ("warn", "network_probe"), "t05": ("fail", "test_tampering")}
NEW_FLAGS = {
    "t01": ("fail", "network_probe,test_tampering"),
    "t05": ("fail", "test_tampering"),  # failing on both sides: not news
    "t02": ("warn", "git_history"),
}


def test_compare_counts_integrity_per_side_and_lists_the_newly_failing_pairs():
    result = compare(flagged(OUTCOMES, BASE_FLAGS), flagged(OUTCOMES, NEW_FLAGS))
    section = result.integrity
    assert section.base.model_dump() == {
        "recorded": True,
        "fail": 1,
        "warn": 1,
        "kinds": {"network_probe": 1, "test_tampering": 1},
    }
    assert (section.new.fail, section.new.warn) == (2, 1)
    assert section.new.kinds == {"git_history": 1, "network_probe": 1, "test_tampering": 2}
    assert [f.model_dump() for f in section.newly_failing] == [
        {"task_id": "t01", "sample": 0, "kinds": ["network_probe", "test_tampering"]}
    ]
    assert result.exit_code == 0 and not result.regression  # integrity alone never sets it
    assert "exit code" in section.note
    again = Comparison.model_validate_json(result.model_dump_json(exclude={"regressions", "regression"}))
    assert again.integrity == section


def test_every_output_of_compare_has_the_integrity_section():
    result = compare(flagged(OUTCOMES, BASE_FLAGS), flagged(OUTCOMES, NEW_FLAGS))
    markdown = markdown_report(result)
    assert "### Integrity (paired attempts)" in markdown
    assert "| fail | 1 | 2 |" in markdown and "| warn | 1 | 1 |" in markdown
    assert "**Integrity fail in new, not in base (1):** `t01 [network_probe, test_tampering]`" in markdown
    assert "does not set the exit code" in markdown
    xml = junit_report(result)
    (axes,) = [suite for suite in xml if suite.name.endswith(": axes")]
    properties = {p.name: p.value for p in axes.properties()}
    assert (properties["integrity.base.fail"], properties["integrity.new.fail"]) == ("1", "2")
    assert properties["integrity.new.kinds"] == "git_history=1,network_probe=1,test_tampering=2"
    assert properties["integrity.newly_failing"] == "1"
    cases = {case.name: case for suite in xml for case in suite}
    assert "test_tampering" in cases["t01"].system_out and cases["t01"].is_passed  # informs, never fails
    assert not cases["t02"].system_out


def test_compare_on_frames_without_the_integrity_columns_counts_them_clean():
    result = compare(frame(OUTCOMES), frame(OUTCOMES))
    assert not result.integrity.base.recorded and not result.integrity.new.recorded
    assert (result.integrity.base.fail, result.integrity.new.warn, result.integrity.newly_failing) == (0, 0, [])
    assert sum("no integrity record" in note for note in result.notes) == 2
    assert "not recorded" in markdown_report(result)
    mixed = compare(frame(OUTCOMES), flagged(OUTCOMES, NEW_FLAGS))  # an older base against a new run
    assert [f.task_id for f in mixed.integrity.newly_failing] == ["t01", "t05"]
    assert mixed.integrity.new.recorded and not mixed.integrity.base.recorded


def test_compare_command_reports_integrity_from_scored_run_folders(tmp_path):
    base = write_run(tmp_path, "base", {"m": BASE_RESOLVED}, run_seed=4)
    new = write_run(tmp_path, "new", {"m": BASE_RESOLVED}, run_seed=4)
    rows = [AttemptScores.model_validate_json(line) for line in (new / "scores.jsonl").read_text().splitlines()]
    failing = IntegrityReport.of([IntegrityFlag.make("test_tampering", f"conftest.py: {HOSTILE}", source="tests")])
    for row in rows:
        if row.task_id == "t03":  # passed the tests by tampering with them: unresolved
            row.integrity = failing
            row.correctness = row.correctness.model_copy(update={"resolved": False, "score": 0.0})
    (new / "scores.jsonl").write_text("".join(row.model_dump_json() + "\n" for row in rows))
    out, junit = tmp_path / "compare.json", tmp_path / "junit.xml"
    code, text = run_command(base, new, tmp_path, json_out=out, junit=junit)
    assert code == 0  # one lost task of forty is no regression; integrity adds nothing to the exit code
    assert "integrity fail in new, not in base (1): t03 [test_tampering]" in text
    assert re.search(r"base 0 fail, 0 warn → new 1 fail, 0 warn \(test_tampering × 1\)", text)
    assert "does not set the exit code" in text
    result = json.loads(out.read_text())
    assert result["integrity"]["newly_failing"] == [{"task_id": "t03", "sample": 0, "kinds": ["test_tampering"]}]
    assert result["lost"] == [{"task_id": "t03", "sample": 0}]
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(junit))}
    assert {p.name: p.value for p in suites["demo: axes"].properties()}["integrity.newly_failing"] == "1"
    (t03,) = [case for case in suites["demo: tasks"] if case.name == "t03"]
    assert "test_tampering" in t03.system_out and "integrity fail" in t03.result[0].message
