"""Run ids and model names as paths, and resuming by run id, end to end on the real engine."""

import json
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import DEMO_SUITE, EVALKIT
from processes import interruptible

from evalkit.wording import counted

pytestmark = pytest.mark.integration


def rows_of(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def null_server():
    """`evalkit serve --policy null`: a real endpoint for models whose names are hostile paths."""
    proc = interruptible([EVALKIT, "serve", "--policy", "null", "--port", "0"], stdout=subprocess.PIPE, text=True)
    try:
        yield proc.stdout.readline().split(" at ")[1].split()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)


def test_hostile_model_names_write_nothing_outside_the_run_folder(docker_engine, null_server, tmp_path):
    work = tmp_path / "a" / "b" / "c" / "work"  # whatever climbs out of the run folder still lands in tmp_path
    work.mkdir(parents=True)
    names = ["../../evil", "a/b", "..", "x:y/../z"]
    (work / "evalkit.toml").write_text(
        "".join(f'[models."{n}"]\nmodel = "null"\nbase_url = "{null_server}"\n\n' for n in names)
    )
    models = [arg for name in names for arg in ("--model", name)]
    result = subprocess.run(
        [EVALKIT, "run", "--suite", DEMO_SUITE, *models, "--limit", "1", "--run-id", "names", "--out", "runs"],
        capture_output=True, text=True, timeout=600, cwd=work,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    run_dir = work / "runs" / "names"
    outside = [p for p in tmp_path.rglob("*") if p.is_file() and run_dir not in p.parents]
    assert outside == [work / "evalkit.toml"]
    rows = rows_of(run_dir)
    assert sorted(r["model"] for r in rows) == sorted(names)
    trajectories = sorted(p.name for p in (run_dir / "trajectories").iterdir())
    assert len(trajectories) == len(names) == len({r["trajectory"] for r in rows})
    assert all((run_dir / r["trajectory"]).parent == run_dir / "trajectories" for r in rows)


def test_the_ctrl_c_hint_resumes_the_run_by_its_id_alone(demo_suite, docker_engine, tmp_path):
    out = tmp_path / "my runs"
    args = [
        "run",
        "--suite",
        DEMO_SUITE,
        "--model",
        "oracle",
        "--limit",
        "3",
        "--concurrency",
        "1",
        "--max-turns",
        "40",
    ]
    proc = interruptible([EVALKIT, *map(str, args), "--run-id", "halted", "--out", out], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    deadline = time.monotonic() + 180
    while not rows_of(out / "halted") and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-3000:]
    hint = stderr.split("resume with: ")[1].split("\n")[0].strip()
    assert hint == f"evalkit run --run-id halted --out '{out}'"
    kept = len(rows_of(out / "halted"))
    assert 1 <= kept < 3

    resumed = subprocess.run([EVALKIT, *shlex.split(hint)[1:]], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{counted(kept, 'finished attempt')} kept" in resumed.stderr
    rows = rows_of(out / "halted")
    assert sorted(r["task_id"] for r in rows) == sorted(t.id for t in demo_suite.tasks[:3])
    assert all(r["resolved"] for r in rows)
    manifest = json.loads((out / "halted" / "run.json").read_text())
    assert manifest["options"]["limits"] == {"max_turns": 40} and len(manifest["options"]["task_ids"]) == 3

    again = subprocess.run([EVALKIT, "score", "halted"], capture_output=True, text=True, timeout=300, cwd=out.parent)
    assert again.returncode == 2 and "no run `halted` under reports/runs" in again.stderr  # --out is not the default
    again = subprocess.run([EVALKIT, "score", out / "halted"], capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
