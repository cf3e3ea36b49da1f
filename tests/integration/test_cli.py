"""The CLI end to end on the real engine: validation, predictions, interruption and clean-up."""

import contextlib
import json
import os
import signal
import subprocess
import threading
import time

import docker.errors
import pytest
from cheats import PATCH_REPORTS
from conftest import DEMO_SUITE, EVALKIT
from conftest import run_evalkit as evalkit
from processes import interruptible
from toy import BASE_FILES, diff_of

from evalkit.files import file_component
from evalkit.sandbox.docker.containers import (
    LABEL_OWNER,
    LABEL_OWNER_START,
    LABEL_RUN,
    LABEL_TASK,
    container_labels,
    owner_label,
    process_start,
    sweep_orphans,
)

pytestmark = pytest.mark.integration


def containers_of(client, owner_pid):
    """Listed while evalkit may be removing them: one removed between listing and inspecting is gone."""
    owner = f"{LABEL_OWNER}={owner_label(owner_pid)}"
    return client.containers.list(all=True, ignore_removed=True, filters={"label": owner})


def test_validate_demo_suite_every_task_gold_resolves_and_empty_does_not(demo_suite, docker_engine, tmp_path):
    out = tmp_path / "health.json"
    result = evalkit("tasks", "validate", DEMO_SUITE, "--json", out)
    rows = json.loads(out.read_text())
    assert result.returncode == 0, result.stdout + result.stderr
    assert [r["task_id"] for r in rows] == [t.id for t in demo_suite.tasks]
    for row in rows:
        assert row["gold_resolved"] and row["gold_runs"] == [True, True, True], row
        assert not row["empty_resolved"] and not row["flaky"] and row["valid"], row
    assert "Task validation" in result.stdout


def test_validate_json_flag_alone_prints_rows(toy_suite_dir, docker_engine):
    result = evalkit("tasks", "validate", toy_suite_dir, "--runs", "1", "--json")
    assert result.returncode == 0, result.stderr
    (row,) = json.loads(result.stdout)
    assert row["task_id"] == "calc-power" and row["valid"] and not row["empty_resolved"]


def test_evaluate_swebench_predictions_writes_per_instance_reports(toy_suite_dir, toy_task, tmp_path, docker_engine):
    predictions = tmp_path / "preds.jsonl"
    wrong_power = BASE_FILES["calc/__init__.py"] + "\n\ndef power(a, b):\n    return 0\n"
    cheat_patch = diff_of(toy_suite_dir / "repos" / "calc", {"calc/__init__.py": wrong_power + PATCH_REPORTS})
    records = [
        {"instance_id": "calc-power", "model_name_or_path": "gold/model", "model_patch": toy_task.patch},
        {"instance_id": "calc-power", "model_name_or_path": "empty", "model_patch": ""},
        {"instance_id": "not-in-suite", "model_name_or_path": "empty", "model_patch": ""},
        {"instance_id": "calc-power", "model_name_or_path": "cheat", "model_patch": cheat_patch},
    ]
    predictions.write_text("\n".join(json.dumps(r) for r in records))
    result = evalkit("evaluate", predictions, "--suite", toy_suite_dir, "--run-id", "t1", "--out", tmp_path / "ev")
    assert result.returncode == 0, result.stderr
    assert "not-in-suite" in result.stderr
    gold_dir = tmp_path / "ev/t1" / file_component("gold/model") / "calc-power"  # `/` cannot be in a folder name
    gold = json.loads((gold_dir / "report.json").read_text())["calc-power"]
    assert gold["resolved"] and gold["patch_applied"] and gold_dir.parent.name.startswith("gold_model--")
    assert (gold_dir / "test_output.txt").read_text()
    summary = json.loads((tmp_path / "ev/t1/empty.report.json").read_text())
    assert summary["empty_patch_ids"] == ["calc-power"] and summary["resolved_instances"] == 0
    # printed: instances, resolved, unresolved, empty patch, errors, not applied
    empty_row = next(line.split() for line in result.stdout.splitlines() if line.startswith("empty "))
    assert empty_row == ["empty", "1", "0", "0", "1", "0", "0"], result.stdout
    cheat = json.loads((tmp_path / "ev/t1/cheat/calc-power/report.json").read_text())["calc-power"]
    assert not cheat["resolved"]  # the hidden tests passed, but only because pytest's reports were patched
    assert any("TestReport" in flag["evidence"] for flag in cheat["integrity_flags"])


def start_validation_with_a_live_container(client, stderr=subprocess.DEVNULL):
    """Start `evalkit tasks validate` on the demo suite; return once it has a container running."""
    proc = interruptible([EVALKIT, "tasks", "validate", DEMO_SUITE], stdout=subprocess.DEVNULL, stderr=stderr)
    deadline = time.monotonic() + 120
    while not containers_of(client, proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert containers_of(client, proc.pid), "validation never started a container"
    return proc


def test_interrupted_validation_leaves_no_container(demo_suite, docker_engine):
    proc = start_validation_with_a_live_container(docker_engine, stderr=subprocess.PIPE)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert b"interrupted" in stderr and b"Traceback" not in stderr
    assert not containers_of(docker_engine, proc.pid)


def test_killed_run_leaves_orphans_that_the_next_sweep_removes(demo_suite, docker_engine):
    proc = start_validation_with_a_live_container(docker_engine)
    proc.kill()
    proc.wait()
    assert containers_of(docker_engine, proc.pid), "SIGKILL cannot clean up: the orphans must be there"
    removed = sweep_orphans(docker_engine)
    assert removed and not containers_of(docker_engine, proc.pid)


def test_sandbox_prune_removes_dead_owners_containers_and_all_removes_live_ones_too(docker_engine):
    run_id = f"prune-test-{os.getpid()}"  # other evalkit processes on this engine are left alone
    child = subprocess.Popen(["sleep", "0.1"])
    dead_owner = {LABEL_OWNER: owner_label(child.pid), LABEL_OWNER_START: process_start(child.pid) or ""}
    child.wait()
    live = container_labels(run_id, "live-task", "agent")  # owned by this test process
    made = [
        docker_engine.containers.run("evalkit/base:latest", ["sleep", "300"], detach=True, labels=labels)
        for labels in (live, {**live, LABEL_TASK: "dead-task", **dead_owner})
    ]
    try:
        result = evalkit("sandbox", "prune", "--run-id", run_id)
        assert result.returncode == 0, result.stderr
        assert f"removed {made[1].id[:12]} (run {run_id}, task dead-task)" in result.stdout
        assert "1 container removed" in result.stdout
        assert "1 container of running evalkit processes kept" in result.stdout
        (left,) = docker_engine.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})
        assert left.id == made[0].id

        result = evalkit("sandbox", "prune", "--run-id", run_id, "--all")
        assert result.returncode == 0 and "1 container removed" in result.stdout
        assert not docker_engine.containers.list(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})
    finally:
        for container in made:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True)


def test_a_sweep_removes_what_it_lists_even_while_a_dead_owners_create_is_still_under_way(docker_engine):
    """The engine lists a container whose `create` is still under way, answers "no such container" to
    its removal, then registers it: a sweep that believed the answer left it behind (seen in CI after
    a SIGKILL). Creates run back to back here, as a killed owner's last one would be."""
    run_id = f"sweep-race-{os.getpid()}"
    child = subprocess.Popen(["sleep", "0.1"])
    dead_owner = {LABEL_OWNER: owner_label(child.pid), LABEL_OWNER_START: process_start(child.pid) or ""}
    child.wait()
    labels = {**container_labels(run_id, "race-task", "agent"), **dead_owner}
    stop = time.monotonic() + 10

    def create_until_stop():
        while time.monotonic() < stop:
            docker_engine.api.create_container("evalkit/base:latest", ["true"], labels=labels)

    creator = threading.Thread(target=create_until_stop)
    creator.start()
    left_behind = set()
    try:
        while creator.is_alive():
            removed = {c.id for c in sweep_orphans(docker_engine) if c.run_id == run_id}
            listed = docker_engine.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})
            present = {info["Id"][:12] for info in listed}
            left_behind |= removed & present
    finally:
        creator.join()
        for info in docker_engine.api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"}):
            docker_engine.api.remove_container(info["Id"], force=True)
    assert not left_behind, f"reported removed, still there: {sorted(left_behind)}"
