"""`evalkit gather` with its defaults on a checker laid out as a real one was (tests/checker_repo.py):
a commit whose diff holds lone carriage returns, separators and Latin-1 bytes is decided like any
other (it becomes a task, its bytes intact); a commit git cannot diff is one rejection and the scan
goes on; the tests' data in `testsuite/` goes to the hidden tests, never into the reference change
or the prompt; and the oracle's diff with a lone `\\r` is scored like any other."""

import json

import pytest
from checker_repo import MESSAGES_DATA, W60_DATA, build_checker_repo
from conftest import run_evalkit

from evalkit.diffs import changed_paths, diff_bytes
from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def gathered(docker_engine, tmp_path_factory):
    root = tmp_path_factory.mktemp("checker")
    repo = build_checker_repo(root / "checker")
    out = root / "suite"
    result = run_evalkit("gather", repo, "--out", out, "--min-lines", "3")
    assert result.returncode == 0, result.stderr[-3000:]
    return out


def test_the_odd_commit_is_a_task_and_the_broken_one_a_rejection(gathered):
    report = json.loads((gathered / "gather-report.json").read_text())
    rejected = {r["subject"]: r for r in report["rejected"]}
    broken = rejected["Add the release notes"]
    assert broken["stage"] == "history" and broken["reason"].startswith("error: ")
    assert "failed: fatal: unable to read" in broken["reason"]
    subjects = sorted(t.metadata["original_message"].splitlines()[0] for t in load_suite(gathered).tasks)
    assert subjects == sorted(["Report long lines", "Report lone carriage returns"])


def test_the_odd_bytes_reach_the_task_as_git_wrote_them(gathered):
    (task,) = [t for t in load_suite(gathered).tasks if t.prompt.startswith("Report lone carriage returns")]
    assert "EMPTY_SET)\r\r" in task.test_patch and "caf\udce9" in task.test_patch
    assert MESSAGES_DATA.split(b"\n")[0].decode() in task.patch
    folder = gathered / task.id
    assert b"+" + W60_DATA.split(b"\n")[2] + b"\n" in (folder / "test_patch.diff").read_bytes()
    assert diff_bytes(task.patch) == (folder / "patch.diff").read_bytes() and b"caf\xe9" in diff_bytes(task.patch)
    assert sorted(task.tests.fail_to_pass) == [
        "testsuite/test_checker.py::test_codes_have_messages",
        "testsuite/test_checker.py::test_lone_carriage_returns_are_reported_and_crlf_is_not",
    ]


def test_test_data_lives_with_the_hidden_tests_and_no_prompt_names_it(gathered):
    for task in load_suite(gathered).tasks:
        assert all(not p.startswith("testsuite/") for p in changed_paths(task.patch)), task.id
        assert any(p.endswith(".txt") for p in changed_paths(task.test_patch)), task.id
        assert "testsuite" not in task.prompt, task.prompt
        assert task.metadata["test_paths"].startswith("testsuite/** (the test modules' folder)")


def test_the_tasks_validate_and_the_oracles_lone_carriage_return_is_scored(gathered, tmp_path):
    validated = run_evalkit("tasks", "validate", gathered, "--json")
    assert validated.returncode == 0, validated.stderr[-2000:]
    assert all(row["valid"] for row in json.loads(validated.stdout))
    ran = run_evalkit(
        "run", "--suite", gathered, "--model", "oracle", "--model", "null", "--run-id", "c", "--out", tmp_path
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "c" / "results.jsonl").read_text().split("\n") if line]
    assert sorted((r["model"], r["resolved"]) for r in rows) == [
        ("null", False), ("null", False), ("oracle", True), ("oracle", True),
    ]  # fmt: skip
    carriage = next(r for r in rows if r["model"] == "oracle" and "\r\r\n" in r["model_patch"])
    assert carriage["integrity"]["flags"] == [] and carriage["patch_applied"]
    scores = [json.loads(line) for line in (tmp_path / "c" / "scores.jsonl").read_text().split("\n") if line]
    assert len(scores) == 4
