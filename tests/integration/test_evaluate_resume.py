"""`evalkit evaluate` killed halfway resumes: run again with the same --run-id and --out, it keeps
every instance report already written (not evaluated again, files untouched) and evaluates the
rest, as SWE-bench's harness skips instances that have a report; a report whose prediction has
changed since, or that ended in an error, is evaluated again. The summaries then count every
instance once."""

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest
from agent_runs import assert_nothing_left
from conftest import DEMO_SUITE, EVALKIT, run_evalkit

from evalkit.tasks import load_suite

pytestmark = pytest.mark.integration


def reports_under(folder: Path) -> dict[str, Path]:
    return {p.parent.name: p for p in folder.glob("gold/*/report.json")}


def test_a_killed_evaluation_resumes_without_evaluating_a_reported_instance_again(docker_engine, tmp_path):
    tasks = load_suite(DEMO_SUITE).tasks
    rows = [{"instance_id": t.id, "model_name_or_path": "gold", "model_patch": t.patch} for t in tasks]
    predictions = tmp_path / "preds.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    command = ["evaluate", predictions, "--suite", DEMO_SUITE, "--run-id", "ev", "--out", tmp_path,
               "--concurrency", "1"]  # fmt: skip
    killed = subprocess.Popen([EVALKIT, *map(str, command)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while len(reports_under(tmp_path / "ev")) < 3 and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    before = {name: path.stat().st_mtime_ns for name, path in reports_under(tmp_path / "ev").items()}
    assert 3 <= len(before) < len(tasks), before
    changed = sorted(before)[0]  # its prediction changes before the resume: its old report no longer holds
    rows = [{**r, "model_patch": ""} if r["instance_id"] == changed else r for r in rows]
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    resumed = run_evalkit(*command)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    kept = len(before) - 1
    said = " ".join(resumed.stderr.split())
    assert f"resuming evaluation ev: {kept} instance reports kept, {len(tasks) - kept} to evaluate" in said, said
    after = reports_under(tmp_path / "ev")
    assert sorted(after) == sorted(t.id for t in tasks)
    assert {n: p.stat().st_mtime_ns for n, p in after.items() if n in before and n != changed} == {
        n: t for n, t in before.items() if n != changed
    }  # kept as written: not evaluated again
    summary = json.loads((tmp_path / "ev" / "gold.report.json").read_text())
    assert summary["submitted_instances"] == len(tasks) and summary["empty_patch_ids"] == [changed]
    assert sorted(summary["resolved_ids"]) == sorted(t.id for t in tasks if t.id != changed)
    assert_nothing_left(docker_engine, "ev")
