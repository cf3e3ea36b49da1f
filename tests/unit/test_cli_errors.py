"""User errors from the CLI are one line on stderr with exit code 2, never a traceback."""

import json
from functools import partial

from conftest import run_evalkit

evalkit = partial(run_evalkit, timeout=120)


def test_bad_suite_is_one_line_without_traceback(tmp_path):
    result = evalkit("tasks", "list", tmp_path / "missing")
    assert result.returncode == 2
    assert "no such suite" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_predictions_file_names_the_record_and_field(tmp_path):
    (tmp_path / "suite.jsonl").write_text("")
    preds = tmp_path / "preds.json"
    preds.write_text(json.dumps([{"model_patch": ""}]))
    result = evalkit("evaluate", preds, "--suite", tmp_path / "suite.jsonl")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unknown_task_id_is_named(tmp_path):
    from toy import write_toy_suite

    suite = write_toy_suite(tmp_path)
    result = evalkit("tasks", "validate", suite, "--task", "nope")
    assert result.returncode == 2 and "no task named nope" in result.stderr
