"""Run ids are checked before they become folders; model names and task ids become safe,
distinct file names; a bare run id finds its run folder."""

import json

import pytest

from evalkit.errors import EvalkitError
from evalkit.files import attempt_file_name, check_run_id, file_component
from evalkit.runs.folders import run_folder
from evalkit.scoring.predictions import Prediction, write_instance_report
from evalkit.verify.correctness import CorrectnessResult

BAD_RUN_IDS = ["..", ".", "../../x", "a/b", "", "x y", "/abs", "a\\b", "x" * 101, "tab\t", "é"]
TRICKY_NAMES = [
    "openai/gpt-4o", "openai_gpt-4o", "openai:gpt-4o", "openai gpt-4o", "replay:runs/a/t.jsonl", "..", ".",
    "../../evil", "a/b", "a_b", "a__b", "", "/", "//", "x" * 150, "x" * 151, "ü", "u", "_", "a--0123abcd",
]  # fmt: skip


@pytest.mark.parametrize("run_id", ["demo", "demo-20250101-120000-ab12cd", "a.b_c-1", "x" * 100, ".hidden"])
def test_good_run_ids_pass_unchanged(run_id):
    assert check_run_id(run_id) == run_id


@pytest.mark.parametrize("run_id", BAD_RUN_IDS)
def test_bad_run_ids_are_one_line_naming_the_option_and_the_rule(run_id):
    with pytest.raises(EvalkitError) as error:
        check_run_id(run_id)
    message = str(error.value)
    assert message.startswith("--run-id ") and "letters, digits" in message and "\n" not in message


def test_safe_model_names_are_kept_as_they_are():
    for name in ("oracle", "null", "gpt-4o", "qwen2.5-coder-32b", "my_model.v2"):
        assert file_component(name) == name


@pytest.mark.parametrize("name", TRICKY_NAMES)
def test_every_name_becomes_one_harmless_component(name):
    component = file_component(name)
    assert component not in ("", ".", "..") and "/" not in component and "\\" not in component
    assert len(component) <= 100 and component.isascii() and not component.startswith(".")


def test_different_names_never_share_a_component():
    names = [*TRICKY_NAMES, *(file_component(n) for n in TRICKY_NAMES)]  # a name that looks like a mapped one too
    components = [file_component(n) for n in dict.fromkeys(names)]
    assert len(set(components)) == len(components)


def test_attempt_file_names_cannot_be_read_two_ways():
    assert attempt_file_name("ledger-csv", "oracle", 0) == "ledger-csv__oracle__0.jsonl"
    assert attempt_file_name("django__django-11099", "gpt-4o", 1) == "django__django-11099__gpt-4o__1.jsonl"
    pairs = [("a__b", "c"), ("a", "b__c"), ("a_", "_b"), ("a", "__b"), ("a__", "b")]
    names = {attempt_file_name(task, model, 0) for task, model in pairs}
    assert len(names) == len(pairs) and all("/" not in n for n in names)


def test_predictions_of_a_hostile_model_stay_in_their_folder(tmp_path):
    out = tmp_path / "deep" / "out"
    for model, instance in (("../../evil", "task-1"), ("a/b", "../../../escape"), ("..", "..")):
        prediction = Prediction(instance_id=instance, model_name_or_path=model, model_patch="")
        write_instance_report(out, prediction, CorrectnessResult(task_id=instance))
    written = sorted(p for p in tmp_path.rglob("*") if p.is_file())
    assert len(written) == 9 and all(out in p.parents for p in written)
    reports = [json.loads(p.read_text()) for p in written if p.name == "report.json"]
    assert sorted(next(iter(r.values()))["model_name_or_path"] for r in reports) == ["..", "../../evil", "a/b"]


def make_run(folder):
    folder.mkdir(parents=True)
    (folder / "run.json").write_text("{}")
    return folder


def test_a_run_folder_or_a_bare_run_id_finds_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    by_id = make_run(tmp_path / "reports" / "runs" / "demo")
    assert run_folder("demo").resolve() == run_folder(by_id) == run_folder("reports/runs/demo").resolve() == by_id
    other = make_run(tmp_path / "elsewhere" / "r1")
    assert run_folder("r1", tmp_path / "elsewhere") == other
    (tmp_path / "demo").mkdir()  # a folder that is no run does not hide the run of that id
    assert run_folder("demo").resolve() == by_id
    local = make_run(tmp_path / "local")
    assert run_folder("local") == local.relative_to(tmp_path)


@pytest.mark.parametrize("given", ["missing", "../missing", "reports/runs/missing"])
def test_a_missing_run_is_one_line_saying_where_it_looked(tmp_path, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(EvalkitError) as error:
        run_folder(given)
    message = str(error.value)
    assert f"no run folder {given}" in message and "\n" not in message
    assert ("under reports/runs" in message) == ("/" not in given)
