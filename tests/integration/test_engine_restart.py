"""The Docker engine stopping mid-run: `evalkit run` pauses, waits for it, runs again the attempts
whose sandboxes went with it, ends without a traceback and leaves no container behind; past
`--engine-wait` it stops with one line saying how to resume. The engine stopped is a private
dockerd (tests/private_engine.py), never the shared one."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DEMO_SUITE, EVALKIT
from private_engine import PrivateEngine

from evalkit.sandbox.docker.containers import LABEL_RUN
from evalkit.sandbox.docker.images import BASE_IMAGE

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def private_engine(docker_engine):
    reason = PrivateEngine.unavailable()
    if reason:
        pytest.skip(reason)
    engine = PrivateEngine()
    try:
        engine.start()
        engine.load_image(docker_engine, BASE_IMAGE)
        yield engine
    finally:
        engine.destroy()
    assert not engine.root.exists()


def rows_of(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def start_run(engine: PrivateEngine, out: Path, run_id: str, *extra: str) -> tuple[subprocess.Popen, Path]:
    """`evalkit run` on the demo suite against the private engine; output to files (no terminal)."""
    log = out / f"{run_id}.log"
    with log.open("w") as stderr:
        process = subprocess.Popen(
            [EVALKIT, "run", "--suite", DEMO_SUITE, "--model", "oracle", "--concurrency", "2",
             "--run-id", run_id, "--out", out, *extra],
            stdout=subprocess.DEVNULL, stderr=stderr, env=engine.env(),
        )  # fmt: skip
    return process, log


def wait_for_rows(run_dir: Path, count: int, process: subprocess.Popen, timeout_s: float = 180) -> None:
    deadline = time.monotonic() + timeout_s
    while len(rows_of(run_dir)) < count:
        assert process.poll() is None, f"the run ended before {count} results"
        assert time.monotonic() < deadline, f"fewer than {count} results after {timeout_s:.0f} s"
        time.sleep(0.2)


def test_a_run_waits_for_a_restarted_engine_and_resolves_every_attempt(private_engine, demo_suite, tmp_path):
    process, log = start_run(private_engine, tmp_path, "restart")
    run_dir = tmp_path / "restart"
    try:
        wait_for_rows(run_dir, 2, process)
        private_engine.stop()
        time.sleep(8)
        private_engine.start()
        code = process.wait(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    stderr = log.read_text()
    assert code == 0, stderr[-3000:]
    assert "Traceback" not in stderr
    assert "Docker engine unavailable" in stderr and "Docker engine back after" in stderr

    rows = rows_of(run_dir)
    latest = {(r["task_id"], r["model"], r["sample"]): r for r in rows}
    assert sorted(task for task, _, _ in latest) == sorted(t.id for t in demo_suite.tasks)
    assert all(r["resolved"] and r["stop_reason"] == "submitted" for r in latest.values()), latest
    lost = [i for i, r in enumerate(rows) if r["stop_reason"] == "sandbox_error"]
    # the two attempts running when the engine stopped went with it: recorded, then run again
    assert lost, f"no attempt was in flight when the engine stopped:\n{stderr}"
    assert stderr.count("run again once the engine answers") == len(lost)
    for index in lost:
        key = (rows[index]["task_id"], rows[index]["model"], rows[index]["sample"])
        assert any((r["task_id"], r["model"], r["sample"]) == key for r in rows[index + 1 :]), key
    assert private_engine.containers(f"{LABEL_RUN}=restart") == []


def test_past_the_engine_wait_the_run_stops_with_one_line_saying_how_to_resume(private_engine, tmp_path):
    process, log = start_run(private_engine, tmp_path, "gone", "--engine-wait", "3")
    try:
        wait_for_rows(tmp_path / "gone", 1, process)
        private_engine.stop()
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        private_engine.start()
    stderr = log.read_text()
    assert code == 2, stderr[-3000:]
    assert "Traceback" not in stderr
    error = [line for line in stderr.splitlines() if line.startswith("error:")]
    results = tmp_path / "gone" / "results.jsonl"
    assert error == [
        f"error: the Docker engine did not answer for 3 s; finished attempts are in {results}; "
        f"resume with evalkit run --run-id gone --out {tmp_path}"
    ]
    # its containers could not be removed while the engine was down: the next command sweeps them
    swept = subprocess.run([EVALKIT, "sandbox", "prune", "--run-id", "gone"], capture_output=True, text=True,
                           env=private_engine.env(), timeout=120)  # fmt: skip
    assert swept.returncode == 0, swept.stderr
    assert private_engine.containers(f"{LABEL_RUN}=gone") == []
