import json
import textwrap

import pytest

from evalkit.errors import EvalkitError
from evalkit.tasks import load_suite
from evalkit.tasks.write import write_suite

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
    assert not suite.skipped
    (task,) = suite.tasks
    assert task.id == "toy-one"
    assert task.patch == DIFF and task.test_patch == DIFF
    assert task.source.snapshot == (suite_dir / "repo").resolve()
    assert task.tests.command == "python -m pytest"
    assert task.limits.network is False


def test_bad_tasks_give_one_line_each_naming_the_file_and_the_rest_still_load(suite_dir):
    make_task(suite_dir, "good")
    make_task(
        suite_dir, "no-f2p", GOOD_TOML.replace('fail_to_pass = ["tests/test_x.py::test_new"]', "fail_to_pass = []")
    )
    make_task(suite_dir, "typo", GOOD_TOML.replace("prompt =", "promt ="))
    make_task(suite_dir, "broken-toml", "prompt = \n")
    make_task(suite_dir, "no-patch", patches=False)
    suite = load_suite(suite_dir)
    assert [t.id for t in suite.tasks] == ["good"]
    assert suite.total == 5
    skipped = {s.task: s for s in suite.skipped}
    assert set(skipped) == {"no-f2p", "typo", "broken-toml", "no-patch"}
    assert skipped["no-f2p"].reason == "`tests.fail_to_pass`: must not be empty"
    assert skipped["typo"].reason.startswith("unknown key `promt` (did you mean `prompt`?); allowed: id, prompt, repo,")
    assert "missing key `prompt`" in skipped["typo"].reason
    assert skipped["broken-toml"].reason.startswith("not valid TOML")
    assert skipped["no-patch"].file == str(suite_dir / "no-patch" / "patch.diff")
    assert skipped["no-patch"].reason.startswith("missing: the reference change")
    for name in ("no-f2p", "typo", "broken-toml"):
        assert skipped[name].file == str(suite_dir / name / "task.toml")
    assert all("\n" not in str(s) for s in suite.skipped)


def test_errors_are_plain_words_not_pydantics(suite_dir):
    make_task(suite_dir, "nested-typo", GOOD_TOML.replace("[tests]", "[tests]\ntimeout = 30"))
    make_task(suite_dir, "not-a-number", GOOD_TOML.replace("[tests]", "[tests]\ntimeout_s = 'abc'"))
    make_task(suite_dir, "bad-limit", GOOD_TOML + "[limits]\nmax_turns = 0\n")
    make_task(suite_dir, "bad-id", 'id = "a b"\n' + GOOD_TOML)
    reasons = {s.task: s.reason for s in load_suite(suite_dir).skipped}
    assert reasons["nested-typo"] == (
        "unknown key `tests.timeout` (did you mean `timeout_s`?); "
        "allowed: command, framework, fail_to_pass, pass_to_pass, timeout_s"
    )
    assert reasons["not-a-number"] == "`tests.timeout_s`: expected a number, got 'abc'"
    assert reasons["bad-limit"] == "`limits.max_turns`: must be more than 0, got 0"
    assert reasons["bad-id"].startswith("`id`: 'a b' may hold only letters, digits")
    assert not any("Input should" in r or "Extra inputs" in r for r in reasons.values())


def test_a_bad_byte_in_task_toml_is_reported_against_it(suite_dir):
    folder = make_task(suite_dir, "latin1")
    path = folder / "task.toml"
    path.write_bytes(path.read_bytes().replace(b"a", b"\xe9", 1))
    (skipped,) = load_suite(suite_dir).skipped
    assert skipped.file == str(path)
    assert "byte 0xe9 is not UTF-8" in skipped.reason and skipped.reason.startswith("line ")


@pytest.mark.parametrize("name", ["patch.diff", "test_patch.diff"])
def test_a_diff_keeps_bytes_that_are_not_utf8_and_writes_them_back(suite_dir, tmp_path, name):
    """A diff of a Latin-1 file is content as git wrote it, not a broken task."""
    folder = make_task(suite_dir, "latin1")
    path = folder / name
    odd = path.read_bytes().replace(b"a", b"\xe9\r", 1)
    path.write_bytes(odd)
    suite = load_suite(suite_dir)
    assert not suite.skipped
    write_suite(tmp_path / "copy", "copy", "", suite.tasks)
    assert (tmp_path / "copy" / "latin1" / name).read_bytes() == odd


def test_a_duplicate_id_names_both_folders(suite_dir):
    make_task(suite_dir, "first", 'id = "same"\n' + GOOD_TOML)
    make_task(suite_dir, "second", 'id = "same"\n' + GOOD_TOML)
    suite = load_suite(suite_dir)
    assert [t.id for t in suite.tasks] == ["same"]
    (skipped,) = suite.skipped
    assert skipped.file == str(suite_dir / "second" / "task.toml")
    assert str(suite_dir / "first") in skipped.reason and "kept that one" in skipped.reason


def test_a_prompt_over_the_limit_is_a_task_error_naming_its_length(suite_dir):
    long_prompt = "x" * 20_001
    make_task(suite_dir, "long", GOOD_TOML.replace("Make the thing do more.", long_prompt))
    make_task(suite_dir, "short")
    suite = load_suite(suite_dir)
    assert [t.id for t in suite.tasks] == ["short"]
    (skipped,) = suite.skipped
    assert "task `long`: the prompt is 20,001 characters, over the limit of 20,000" in skipped.reason
    (suite_dir / "suite.toml").write_text('name = "mine"\nmax_prompt_chars = 30000\n')
    suite = load_suite(suite_dir)
    assert suite.name == "mine" and suite.max_prompt_chars == 30_000
    assert sorted(t.id for t in suite.tasks) == ["long", "short"] and not suite.skipped


def test_a_bad_suite_toml_is_one_line_naming_it(suite_dir):
    make_task(suite_dir, "short")
    (suite_dir / "suite.toml").write_text("max_prompt_char = 10\n")
    with pytest.raises(EvalkitError) as raised:
        load_suite(suite_dir)
    assert str(raised.value) == (
        f"{suite_dir / 'suite.toml'}: unknown key `max_prompt_char` (did you mean `max_prompt_chars`?); "
        "allowed: name, description, max_prompt_chars"
    )


def test_missing_snapshot_folder_is_named(suite_dir):
    make_task(suite_dir, "lost", GOOD_TOML.replace("../repo", "../nowhere"))
    (skipped,) = load_suite(suite_dir).skipped
    assert skipped.reason == "`source.snapshot`: ../nowhere is not a folder"


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
    assert not suite.skipped
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
    assert [s.file for s in suite.skipped] == [f"{path}:2", f"{path}:3"]
    assert [s.task for s in suite.skipped] == ["line 2", "x-2"]
    assert "FAIL_TO_PASS" in suite.skipped[1].reason


def test_duplicate_ids_keep_the_first(tmp_path):
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(swebench_row()) + "\n" + json.dumps(swebench_row()) + "\n")
    suite = load_suite(path)
    assert len(suite.tasks) == 1
    assert suite.skipped[0].reason == "task id `owner__proj-1` is already the id of line 1; kept that one"


def test_missing_suite_is_a_user_error(tmp_path):
    with pytest.raises(EvalkitError, match="no such suite"):
        load_suite(tmp_path / "absent")
