"""A run's results survive a kill: rows are whole lines, a half-written last line is dropped when
the run reopens, and resuming plans exactly the attempts not finished (harness failures again,
endpoint errors too with --retry-errors); the latest row of an attempt wins, and each row of an
attempt run again has a trajectory of its own, also when it came from a cluster node. run.json
records the suite's tasks that did not load."""

import json

import pytest

from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec
from evalkit.records import AttemptRecord
from evalkit.runs.attempt import AttemptOutcome
from evalkit.runs.display import skipped_tasks_lines
from evalkit.runs.orchestrate import open_run, plan_attempts, write_node_trajectory
from evalkit.runs.store import RunStore
from evalkit.tasks import SkippedTask, Suite


def record(task, model="m", sample=0, stop="submitted", resolved=True):
    return AttemptRecord(run_id="r", task_id=task, model=model, sample=sample, resolved=resolved, stop_reason=stop)


def test_rows_round_trip_and_a_cut_line_is_dropped_on_reopen(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    store.append(record("a"))
    store.append(record("b", resolved=False))
    with store.results_path.open("a") as handle:  # a kill in the middle of a write
        handle.write('{"run_id": "r", "task_id": "c", "mod')
    reopened = RunStore(tmp_path / "r")
    reopened.open()
    reopened.append(record("d"))
    assert [r.task_id for r in reopened.records()] == ["a", "b", "d"]
    assert reopened.records()[1].resolved is False


def test_harness_failures_are_attempted_again_and_the_last_row_wins(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    store.append(record("a", stop="sandbox_error", resolved=False))
    store.append(record("b", stop="endpoint_error", resolved=False))
    assert store.finished_keys() == {("b", "m", 0)}
    store.append(record("a"))
    assert store.finished_keys() == {("a", "m", 0), ("b", "m", 0)}
    assert len(store.records()) == 2


def test_each_row_of_an_attempt_names_a_trajectory_of_its_own_and_a_reopened_store_counts_on(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    first = store.trajectory_path("a", "m", 0)
    assert first.name == "a__m__0.jsonl" and store.trajectory_path("a", "m", 0) == first  # until a row is written
    store.append(record("a", stop="endpoint_error", resolved=False))
    assert store.trajectory_path("a", "m", 0).name == "a__m__0.try2.jsonl"
    assert store.trajectory_path("a", "m", 1).name == "a__m__1.jsonl"  # another sample: its first
    reopened = RunStore(tmp_path / "r")  # a resume: the rows on disk count
    reopened.open()
    reopened.append(record("a", stop="endpoint_error", resolved=False))
    assert reopened.trajectory_path("a", "m", 0).name == "a__m__0.try3.jsonl"


def test_a_nodes_trajectory_and_the_files_beside_it_take_the_name_of_the_attempts_next_row(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    store.append(record("a", stop="sandbox_error", resolved=False))  # its trajectory is a__m__0.jsonl
    sent = record("a").model_copy(update={"trajectory": "trajectories/a__m__0.jsonl"})  # as the node named it
    beside = {"a__m__0.agent.log": b"log", "a__m__0.agent.traj.json": b"{}"}
    events = [{"type": "start", "task_id": "a"}, {"type": "agent_command", "command": "x", "log": "a__m__0.agent.log"}]
    trajectory = "".join(json.dumps(e) + "\n" for e in events).encode()
    written = write_node_trajectory(store, sent, AttemptOutcome(sent, trajectory=trajectory, beside=beside))
    assert written.trajectory == "trajectories/a__m__0.try2.jsonl"
    files = {p.name: p.read_bytes() for p in store.trajectories.iterdir()}
    assert files.keys() == {"a__m__0.try2.jsonl", "a__m__0.try2.agent.log", "a__m__0.try2.agent.traj.json"}
    assert files["a__m__0.try2.agent.log"] == b"log" and files["a__m__0.try2.agent.traj.json"] == b"{}"
    start, command = [json.loads(line) for line in files["a__m__0.try2.jsonl"].splitlines()]
    assert start == events[0] and command == {**events[1], "log": "a__m__0.try2.agent.log"}  # names its log


def errored(store: RunStore) -> set[tuple[str, str, int]]:
    """The attempts whose latest row is an endpoint or sandbox error."""
    return {r.key for r in store.records() if r.errored}


def test_retry_errors_plans_endpoint_errors_too_and_the_latest_row_wins(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    store.append(record("a", stop="endpoint_error", resolved=False))
    store.append(record("b", stop="sandbox_error", resolved=False))
    store.append(record("c"))
    assert store.finished_keys() == {("a", "m", 0), ("c", "m", 0)}  # a plain resume keeps endpoint errors
    assert store.finished_keys(retry_errors=True) == {("c", "m", 0)}
    assert errored(store) == {("a", "m", 0), ("b", "m", 0)}
    store.append(record("a", stop="submitted", resolved=True))  # the retry succeeded
    store.append(record("b", stop="endpoint_error", resolved=False))  # this one failed again
    latest = {r.task_id: r for r in store.records()}
    assert (latest["a"].stop_reason, latest["a"].resolved, latest["a"].errored) == ("submitted", True, False)
    assert latest["b"].stop_reason == "endpoint_error" and latest["b"].errored
    assert errored(store) == {("b", "m", 0)}
    assert len(store.results_path.read_text().splitlines()) == 5  # appended, never rewritten


def test_plan_skips_finished_attempts_and_interleaves_models(demo_suite):
    tasks = demo_suite.tasks[:2]
    done = {(tasks[0].id, "oracle", 0)}
    plan = plan_attempts(tasks, ["oracle", "null"], samples=2, done=done)
    keys = [(k.task.id, k.model, k.sample) for k in plan]
    assert len(keys) == 2 * 2 * 2 - 1 and (tasks[0].id, "oracle", 0) not in keys
    assert keys[:3] == [(tasks[0].id, "null", 0), (tasks[0].id, "oracle", 1), (tasks[0].id, "null", 1)]


def test_a_file_that_is_not_a_results_file_is_refused(tmp_path):
    store = RunStore(tmp_path / "r")
    store.open()
    store.results_path.write_text("task,model\n")
    with pytest.raises(EvalkitError, match="not an evalkit results file"):
        store.records()


def test_run_json_records_the_suites_skipped_tasks_until_they_load(tmp_path, demo_suite):
    broken = SkippedTask(task=demo_suite.tasks[0].id, file="demo/x/task.toml", reason="unknown key `timeout`")
    other = SkippedTask(task="gone", file="demo/gone/task.toml", reason="not valid TOML")
    first = Suite(name="demo", path=tmp_path, tasks=demo_suite.tasks[1:], skipped=[broken, other])
    store = RunStore(tmp_path / "r")
    spec = ModelSpec(name="oracle", model="oracle", builtin="oracle")
    open_run(store, "r", first, tmp_path, [spec], samples=1)
    manifest = store.read_manifest()
    assert manifest.tasks == [t.id for t in demo_suite.tasks[1:]] and manifest.skipped_tasks == [broken, other]
    on_disk = json.loads((store.dir / "run.json").read_text())["skipped_tasks"]
    assert on_disk[0] == {"task": broken.task, "file": "demo/x/task.toml", "reason": "unknown key `timeout`"}

    fixed = Suite(name="demo", path=tmp_path, tasks=demo_suite.tasks, skipped=[other])  # resumed after a fix
    open_run(store, "r", fixed, tmp_path, [spec], samples=1)
    manifest = store.read_manifest()
    assert len(manifest.tasks) == len(demo_suite.tasks) and manifest.skipped_tasks == [other]


def test_the_terminal_summary_names_each_skipped_task_and_the_count():
    summary = {
        "tasks_loaded": 7,
        "tasks_total": 8,
        "skipped_tasks": [{"task": "b", "file": "demo/b/task.toml", "reason": "unknown key `timeout`"}],
    }
    assert skipped_tasks_lines(summary) == [
        "7 of 8 tasks of the suite loaded; not run:",
        "  demo/b/task.toml: unknown key `timeout`",
    ]
    assert skipped_tasks_lines({"tasks_loaded": 8, "tasks_total": 8, "skipped_tasks": []}) == []
    assert skipped_tasks_lines({}) == []  # a summary.json from before skipped tasks were recorded
