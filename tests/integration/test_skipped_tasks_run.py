"""A suite with a broken task, end to end: `evalkit run` refuses it (exit 2) unless `--skip-invalid`;
then run.json, summary.json, the summary printed, the leaderboard and `compare` all show the
skipped task. The built-in oracle on one task keeps it short."""

import json
import shutil

import pytest
from conftest import DEMO_SUITE, run_evalkit

pytestmark = pytest.mark.integration

BROKEN = "kvstore-batch"
REASON = (
    "unknown key `tests.timeout` (did you mean `timeout_s`?); "
    "allowed: command, framework, fail_to_pass, pass_to_pass, timeout_s"
)


@pytest.fixture(scope="module")
def runs(docker_engine, tmp_path_factory):
    """Two copies of the demo suite, one with a misspelt key in kvstore-batch's task.toml; an
    oracle run of kvstore-ttl on each (`full` and, with --skip-invalid, `partial`)."""
    root = tmp_path_factory.mktemp("skipped-tasks")
    intact, broken = root / "intact", root / "broken"
    shutil.copytree(DEMO_SUITE, intact)
    shutil.copytree(DEMO_SUITE, broken)
    task_file = broken / BROKEN / "task.toml"
    task_file.write_text(task_file.read_text().replace("[tests]\n", "[tests]\ntimeout = 30\n"))
    out = root / "runs"
    common = ("--model", "oracle", "--task", "kvstore-ttl", "--out", out)
    refused = run_evalkit("run", "--suite", broken, "--run-id", "partial", *common)
    partial = run_evalkit("run", "--suite", broken, "--run-id", "partial", "--skip-invalid", *common)
    full = run_evalkit("run", "--suite", intact, "--run-id", "full", *common)
    return {"root": root, "out": out, "file": str(task_file), "refused": refused, "partial": partial, "full": full}


def test_run_refuses_a_suite_with_a_broken_task_without_skip_invalid(runs):
    refused = runs["refused"]
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.splitlines()[0] == f"invalid task {runs['file']}: {REASON}"
    assert "pass --skip-invalid to run the other 7" in refused.stderr.splitlines()[-1]


def test_with_skip_invalid_the_run_records_and_prints_the_skipped_task(runs):
    partial, run_dir = runs["partial"], runs["out"] / "partial"
    assert partial.returncode == 0, partial.stderr[-3000:]
    skipped = [{"task": BROKEN, "file": runs["file"], "reason": REASON}]
    manifest = json.loads((run_dir / "run.json").read_text())
    assert manifest["skipped_tasks"] == skipped and len(manifest["tasks"]) == 7 and BROKEN not in manifest["tasks"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert (summary["tasks_loaded"], summary["tasks_total"], summary["skipped_tasks"]) == (7, 8, skipped)
    stdout = partial.stdout.splitlines()
    at = stdout.index("7 of 8 tasks of the suite loaded; not run:")
    assert stdout[at + 1] == f"  {runs['file']}: {REASON}"
    assert partial.stderr.startswith(f"skipped {runs['file']}: unknown key `tests.timeout`")


def test_compare_refuses_runs_that_loaded_different_tasks_unless_a_subset_is_allowed(runs):
    assert runs["full"].returncode == 0, runs["full"].stderr[-3000:]
    full, partial = runs["out"] / "full", runs["out"] / "partial"
    refused = run_evalkit("compare", full, partial)
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1
    assert f"(missing in the new run: {BROKEN}; missing in the base run: none)" in refused.stderr
    allowed = run_evalkit("compare", full, partial, "--allow-subset", "--json")
    assert allowed.returncode == 0, allowed.stderr
    result = json.loads(allowed.stdout)
    assert (result["tasks_only_base"], result["tasks_only_new"], result["pairs"]) == ([BROKEN], [], 1)
    assert result["notes"][0].startswith("--allow-subset: compared on the tasks both runs loaded")


def test_the_leaderboard_says_how_many_tasks_loaded_and_why_one_did_not(runs):
    board = runs["root"] / "board"
    result = run_evalkit("report", runs["out"] / "full", runs["out"] / "partial", "--out", board)
    assert result.returncode == 0, result.stderr
    data = json.loads((board / "leaderboard.json").read_text())
    loading = {group["runs"][0]: group for suite in data["suites"] for group in suite["loading"]}
    assert (loading["full"]["loaded"], loading["full"]["total"], loading["full"]["skipped"]) == (8, 8, [])
    assert (loading["partial"]["loaded"], loading["partial"]["total"]) == (7, 8)
    assert loading["partial"]["skipped"] == [{"task": BROKEN, "file": runs["file"], "reason": REASON}]
    assert runs["file"] in (board / "index.html").read_text()
