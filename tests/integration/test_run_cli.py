"""`evalkit run` end to end: the built-in models over real HTTP in real sandboxes, resuming a
killed run, Ctrl-C, and replaying a recorded trajectory."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DEMO_SUITE, EVALKIT, run_evalkit
from processes import interruptible

from evalkit.sandbox.docker.containers import LABEL_RUN
from evalkit.wording import counted

pytestmark = pytest.mark.integration


def rows_of(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def run_containers(client, run_id):
    """Listed while evalkit may be removing them: one removed between listing and inspecting is gone."""
    return client.containers.list(all=True, ignore_removed=True, filters={"label": f"{LABEL_RUN}={run_id}"})


@pytest.fixture(scope="module")
def demo_run(demo_suite, docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--model", "oracle", "--model", "null", "--run-id", "demo",
                         "--out", out)  # fmt: skip
    return result, out / "demo"


def test_oracle_resolves_every_demo_task_and_null_none(demo_run, demo_suite, docker_engine):
    result, run_dir = demo_run
    assert result.returncode == 0, result.stderr[-3000:]
    rows = rows_of(run_dir)
    task_ids = sorted(t.id for t in demo_suite.tasks)
    for model, resolved in (("oracle", True), ("null", False)):
        mine = [r for r in rows if r["model"] == model]
        assert sorted(r["task_id"] for r in mine) == task_ids
        assert all(r["resolved"] is resolved and r["stop_reason"] == "submitted" and r["error"] is None for r in mine)
    for row in rows:
        assert row["usage"]["prompt_tokens"] > 0 and row["duration_s"] > 0 and row["sample"] == 0
    assert all(r["model_patch"] == "" for r in rows if r["model"] == "null")
    assert "100.0%" in result.stdout and "0.0%" in result.stdout and f"run folder: {run_dir}" in result.stdout
    assert run_containers(docker_engine, "demo") == []


def test_trajectories_record_every_step(demo_run):
    _, run_dir = demo_run
    row = next(r for r in rows_of(run_dir) if r["model"] == "oracle")
    events = [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]
    kinds = [e["type"] for e in events]
    assert kinds[0] == "start" and kinds[-4:] == ["stop", "diff", "correctness", "integrity"]
    calls = [e for e in events if e["type"] == "model_call"]
    tools = [e for e in events if e["type"] == "tool"]
    assert len(calls) == row["turns"] and len(tools) == row["tool_calls"]
    assert all(c["latency_s"] > 0 and c["usage"]["reported"] for c in calls)
    assert {t["name"] for t in tools} >= {"edit", "submit"} and all("sandbox_s" in t for t in tools)
    assert events[-3]["patch"] == row["model_patch"] and events[-2]["result"]["resolved"]
    assert events[-1]["result"] == {"flags": [], "verdict": "clean", "restored": []}
    assert json.loads((run_dir / "run.json").read_text())["models"].keys() == {"oracle", "null"}


def test_a_recorded_trajectory_replays_to_the_same_verdict(demo_run, tmp_path):
    _, run_dir = demo_run
    row = next(r for r in rows_of(run_dir) if r["model"] == "oracle" and r["task_id"] == "kvstore-batch")
    replay = f"replay:{run_dir / row['trajectory']}"
    result = run_evalkit("run", "--suite", DEMO_SUITE, "--task", "kvstore-batch", "--model", replay,
                         "--run-id", "replay", "--out", tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    (replayed,) = rows_of(tmp_path / "replay")
    assert replayed["resolved"] and replayed["model_patch"] == row["model_patch"]
    assert replayed["turns"] == row["turns"]


def test_without_the_pool_the_results_are_the_same(demo_run, demo_suite, docker_engine, tmp_path):
    _, run_dir = demo_run
    picked = [t.id for t in demo_suite.tasks[:2]]
    result = run_evalkit("run", "--suite", DEMO_SUITE, *(a for t in picked for a in ("--task", t)), "--model", "oracle",
                         "--model", "null", "--run-id", "unpooled", "--out", tmp_path, "--no-pool")  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]

    def outcomes(rows) -> list[tuple]:
        fields = ("task_id", "model", "resolved", "stop_reason", "error", "model_patch", "fail_to_pass", "pass_to_pass")
        return sorted(tuple(json.dumps(r[f]) for f in fields) for r in rows if r["task_id"] in picked)

    assert outcomes(rows_of(tmp_path / "unpooled")) == outcomes(rows_of(run_dir))
    assert run_containers(docker_engine, "unpooled") == []


def start_run(out: Path, run_id: str, *extra: str) -> subprocess.Popen:
    args = ["run", "--suite", DEMO_SUITE, "--model", "oracle", "--run-id", run_id, "--out", out, *extra]
    return interruptible([EVALKIT, *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_rows(run_dir: Path, count: int, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 180
    while len(rows_of(run_dir)) < count and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert len(rows_of(run_dir)) >= count, "the run never finished an attempt"


def test_a_killed_run_resumes_without_losing_finished_attempts(demo_suite, docker_engine, tmp_path):
    proc = start_run(tmp_path, "killed", "--concurrency", "1")
    wait_for_rows(tmp_path / "killed", 2, proc)
    proc.kill()
    proc.communicate()
    before = rows_of(tmp_path / "killed")
    assert 2 <= len(before) < len(demo_suite.tasks)
    pruned = run_evalkit("sandbox", "prune", "--run-id", "killed")
    assert pruned.returncode == 0 and run_containers(docker_engine, "killed") == []

    resumed = run_evalkit("run", "--suite", DEMO_SUITE, "--model", "oracle", "--run-id", "killed", "--out", tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{counted(len(before), 'finished attempt')} kept" in resumed.stderr
    after = rows_of(tmp_path / "killed")
    assert after[: len(before)] == before  # finished attempts are neither lost nor redone
    assert sorted(r["task_id"] for r in after) == sorted(t.id for t in demo_suite.tasks)
    assert all(r["resolved"] for r in after)
    assert run_containers(docker_engine, "killed") == []


def test_ctrl_c_removes_containers_keeps_results_and_says_how_to_resume(demo_suite, docker_engine, tmp_path):
    proc = start_run(tmp_path, "stopped", "--concurrency", "2")
    wait_for_rows(tmp_path / "stopped", 1, proc)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    assert f"resume with: evalkit run --run-id stopped --out {tmp_path}" in stderr and "Traceback" not in stderr
    assert rows_of(tmp_path / "stopped") and run_containers(docker_engine, "stopped") == []


def test_one_run_id_cannot_mix_suites(toy_suite_dir, demo_run, tmp_path):
    _, run_dir = demo_run
    result = run_evalkit("run", "--suite", toy_suite_dir, "--model", "null", "--run-id", "demo",
                         "--out", run_dir.parent)  # fmt: skip
    assert result.returncode == 2 and "use another --run-id" in result.stderr
    assert "Traceback" not in result.stderr


def test_compare_flags_a_planted_regression_and_stays_quiet_on_a_rerun(demo_run, tmp_path):
    _, run_dir = demo_run
    worse = run_evalkit("compare", run_dir, run_dir, "--base-model", "oracle", "--new-model", "null",
                        "--markdown", tmp_path / "c.md", "--junit", tmp_path / "c.xml")  # fmt: skip
    assert worse.returncode == 1, worse.stderr[-2000:]
    assert (tmp_path / "c.md").read_text().startswith("## REGRESSION in resolved")
    assert (tmp_path / "c.xml").read_text().count("<failure") >= 8  # every task flipped
    same = run_evalkit("compare", run_dir, run_dir, "--base-model", "oracle", "--new-model", "oracle")
    assert same.returncode == 0, same.stdout[-2000:]


def test_run_with_a_baseline_exits_with_the_comparison(toy_suite_dir, demo_run, tmp_path):
    five = ("--samples", "5")  # one task: five paired samples make a flip significant (McNemar p = 1/32)
    base = run_evalkit(
        "run", "--suite", toy_suite_dir, "--model", "oracle", "--run-id", "base", "--out", tmp_path, *five
    )
    assert base.returncode == 0, base.stderr[-2000:]
    again = run_evalkit("run", "--suite", toy_suite_dir, "--model", "oracle", "--run-id", "again", "--out", tmp_path,
                        "--baseline", tmp_path / "base", *five)  # fmt: skip
    assert again.returncode == 0, again.stdout[-2000:]
    worse = run_evalkit("run", "--suite", toy_suite_dir, "--model", "null", "--run-id", "worse", "--out", tmp_path,
                        "--baseline", tmp_path / "base", *five)  # fmt: skip
    assert worse.returncode == 1 and "REGRESSION" in worse.stdout
    _, demo_dir = demo_run
    mixed = run_evalkit("compare", demo_dir, tmp_path / "base", "--base-model", "oracle")
    assert mixed.returncode == 2 and "Traceback" not in mixed.stderr
    assert len(mixed.stderr.strip().splitlines()) == 1
