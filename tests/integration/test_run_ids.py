"""Model names as paths, end to end on the real engine."""

import json
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import DEMO_SUITE, EVALKIT

pytestmark = pytest.mark.integration


def rows_of(run_dir: Path) -> list[dict]:
    path = run_dir / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def null_server():
    """`evalkit serve --policy null`: a real endpoint for models whose names are hostile paths."""
    proc = subprocess.Popen([EVALKIT, "serve", "--policy", "null", "--port", "0"], stdout=subprocess.PIPE, text=True)
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
