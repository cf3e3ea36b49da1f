import json
import textwrap

import pytest

from evalkit.errors import EvalkitError
from evalkit.tasks import load_suite

GOOD_TOML = textwrap.dedent(
    """
    prompt = "Make the thing do more."
    repo = "toy"
    tags = ["feature"]
    [source]
    snapshot = "../repo"
    [tests]
    fail_to_pass = ["tests/test_x.py::test_new"]
    pass_to_pass = ["tests/test_x.py::test_old"]
    """
)
DIFF = "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"


def make_task(root, name, toml=GOOD_TOML, patches=True):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(toml)
    if patches:
        (folder / "patch.diff").write_text(DIFF)
        (folder / "test_patch.diff").write_text(DIFF)
    return folder


@pytest.fixture
def suite_dir(tmp_path):
    (tmp_path / "repo").mkdir()
    return tmp_path


def test_folder_suite_loads_task_with_patches_and_defaults(suite_dir):
    make_task(suite_dir, "toy-one")
    suite = load_suite(suite_dir)
    assert not suite.errors
    (task,) = suite.tasks
    assert task.id == "toy-one"
    assert task.patch == DIFF and task.test_patch == DIFF
    assert task.source.snapshot == (suite_dir / "repo").resolve()
    assert task.tests.command == "python -m pytest"
    assert task.limits.network is False


def test_bad_tasks_give_one_line_each_and_the_rest_still_load(suite_dir):
    make_task(suite_dir, "good")
    make_task(
        suite_dir, "no-f2p", GOOD_TOML.replace('fail_to_pass = ["tests/test_x.py::test_new"]', "fail_to_pass = []")
    )
    make_task(suite_dir, "typo", GOOD_TOML.replace("prompt =", "promt ="))
    make_task(suite_dir, "broken-toml", "prompt = \n")
    make_task(suite_dir, "no-patch", patches=False)
    suite = load_suite(suite_dir)
    assert [t.id for t in suite.tasks] == ["good"]
    messages = {e.where.split("/")[-2]: e.problem for e in suite.errors}
    assert set(messages) == {"no-f2p", "typo", "broken-toml", "no-patch"}
    assert "tests.fail_to_pass" in messages["no-f2p"]
    assert "promt" in messages["typo"] or "prompt" in messages["typo"]
    assert "patch.diff" in messages["no-patch"]
    assert all("\n" not in str(e) and "task.toml" in str(e) for e in suite.errors)


def test_missing_snapshot_folder_is_named(suite_dir):
    make_task(suite_dir, "lost", GOOD_TOML.replace("../repo", "../nowhere"))
    (error,) = load_suite(suite_dir).errors
    assert "source.snapshot" in error.problem


def swebench_row(**overrides):
    row = {
        "instance_id": "owner__proj-1",
        "repo": "owner/proj",
        "base_commit": "a" * 40,
        "patch": DIFF,
        "test_patch": DIFF,
        "problem_statement": "It breaks.",
        "FAIL_TO_PASS": json.dumps(["tests/test_x.py::test_new"]),
        "PASS_TO_PASS": "[]",
        "version": "1.0",
    }
    row.update(overrides)
    return row


def test_jsonl_suite_reads_swebench_rows_with_json_string_test_lists(tmp_path):
    path = tmp_path / "suite.jsonl"
    rows = [swebench_row(), swebench_row(instance_id="owner__proj-2", FAIL_TO_PASS=["tests/t.py::a"])]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    suite = load_suite(path)
    assert not suite.errors
    first, second = suite.tasks
    assert first.tests.fail_to_pass == ["tests/test_x.py::test_new"]
    assert first.source.git == "https://github.com/owner/proj" and first.source.base_commit == "a" * 40
    assert first.metadata["version"] == "1.0"
    assert second.tests.fail_to_pass == ["tests/t.py::a"]


def test_jsonl_errors_name_the_line_and_field(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text(
        json.dumps(swebench_row())
        + "\n{not json\n"
        + json.dumps(swebench_row(instance_id="x-2", FAIL_TO_PASS="oops"))
        + "\n"
    )
    suite = load_suite(path)
    assert len(suite.tasks) == 1
    assert [e.where for e in suite.errors] == [f"{path}:2", f"{path}:3"]
    assert "FAIL_TO_PASS" in suite.errors[1].problem


def test_duplicate_ids_keep_the_first(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(swebench_row()) + "\n" + json.dumps(swebench_row()) + "\n")
    suite = load_suite(path)
    assert len(suite.tasks) == 1 and "twice" in suite.errors[0].problem


def test_missing_suite_is_a_user_error(tmp_path):
    with pytest.raises(EvalkitError, match="no such suite"):
        load_suite(tmp_path / "absent")
