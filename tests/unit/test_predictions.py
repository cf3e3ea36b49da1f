import json

import pytest
from rich.console import Console

from evalkit.cli.evaluate import evaluation_table
from evalkit.errors import EvalkitError
from evalkit.scoring.predictions import (
    Prediction,
    instance_folder,
    load_predictions,
    read_instance_report,
    summary_report,
    write_instance_report,
)
from evalkit.verify.correctness import CorrectnessResult


def test_json_list_dict_and_jsonl_predictions_load(tmp_path):
    record = {"instance_id": "a-1", "model_name_or_path": "m/x", "model_patch": "diff"}
    (tmp_path / "p.json").write_text(json.dumps([record]))
    (tmp_path / "d.json").write_text(json.dumps({"a-1": record}))
    (tmp_path / "p.jsonl").write_text(json.dumps(record) + "\n\n")
    for name in ("p.json", "d.json", "p.jsonl"):
        (prediction,), problems = load_predictions(tmp_path / name)
        assert prediction.instance_id == "a-1" and prediction.model_patch == "diff" and problems == []


def test_a_bad_record_is_one_line_naming_file_line_and_field_and_the_others_load(tmp_path):
    path = tmp_path / "p.jsonl"
    good = json.dumps({"instance_id": "a", "model_patch": "+x\u2028y\n"}, ensure_ascii=False)
    path.write_text(good + "\n" + json.dumps({"model_patch": "x"}) + "\n{not json\n" + json.dumps({"instance_id": "b"}))
    predictions, problems = load_predictions(path)
    assert [p.instance_id for p in predictions] == ["a", "b"] and predictions[0].model_patch == "+x\u2028y\n"
    assert sorted(problems) == [
        f"{path}: line 2, field `instance_id`: Field required; left out",
        f"{path}: line 3 is not valid JSON (Expecting property name enclosed in double quotes); left out",
    ]


def test_a_predictions_file_that_is_not_json_is_one_error(tmp_path):
    path = tmp_path / "p.json"
    path.write_text("{not json")
    with pytest.raises(EvalkitError, match=r"p.json: not valid JSON \(line 1"):
        load_predictions(path)


def test_summary_separates_resolved_unresolved_empty_and_errors():
    results = {
        "ok": CorrectnessResult(task_id="ok", resolved=True, patch_applied=True),
        "bad": CorrectnessResult(task_id="bad", patch_applied=True),
        "empty": CorrectnessResult(task_id="empty", patch_empty=True, patch_applied=True),
        "broken": CorrectnessResult(task_id="broken", error="test_patch does not apply"),
    }
    report = summary_report(results, unknown=["ghost"])
    assert report["resolved_ids"] == ["ok"]
    assert report["unresolved_ids"] == ["bad"]
    assert report["empty_patch_ids"] == ["empty"]
    assert report["error_ids"] == ["broken"]
    assert report["submitted_instances"] == 5 and report["unknown_instance_ids"] == ["ghost"]


def test_evaluation_summary_shows_empty_patches_beside_the_other_outcomes():
    results = {
        "ok": CorrectnessResult(task_id="ok", resolved=True, patch_applied=True),
        "bad": CorrectnessResult(task_id="bad", patch_applied=False),
        "empty-1": CorrectnessResult(task_id="empty-1", patch_empty=True, patch_applied=True),
        "empty-2": CorrectnessResult(task_id="empty-2", patch_empty=True, patch_applied=True),
        "broken": CorrectnessResult(task_id="broken", error="test_patch does not apply"),
    }
    console = Console(width=120, record=True)
    console.print(evaluation_table("evaluation t", {"m": summary_report(results, unknown=["ghost"])}))
    header, _, row = console.export_text().splitlines()[1:4]
    columns = ["model", "instances", "resolved", "unresolved", "empty patch", "errors", "not applied"]
    assert header.split("  ") == columns
    assert row.split() == ["m", "5", "1", "1", "2", "1", "1"]  # an error is not also "not applied"


def test_a_written_report_is_read_back_for_the_same_patch_and_policy_only_and_never_an_error(tmp_path):
    pred = Prediction(instance_id="a-1", model_name_or_path="org/m", model_patch="diff --git a/x b/x\n")
    assert read_instance_report(tmp_path, pred) is None  # nothing written yet
    result = CorrectnessResult(task_id="a-1", resolved=True, patch_applied=True, tests_ran=True, log="3 passed")
    write_instance_report(tmp_path, pred, result)
    assert read_instance_report(tmp_path, pred) == result  # the log too, from test_output.txt
    assert read_instance_report(tmp_path, pred.model_copy(update={"model_patch": "other"})) is None
    assert read_instance_report(tmp_path, pred, "flag") is None  # its verdict followed another policy
    write_instance_report(tmp_path, pred, CorrectnessResult(task_id="a-1", error="image build failed"))
    assert read_instance_report(tmp_path, pred) is None  # a harness failure is evaluated again
    write_instance_report(tmp_path, pred, result)
    (instance_folder(tmp_path, pred) / "report.json").write_text('{"a-1": {"resolved": tr')  # cut short
    assert read_instance_report(tmp_path, pred) is None
