"""The CLI on run ids: a bad `--run-id` writes nothing. None of these reach the Docker engine."""

import subprocess

import pytest
from conftest import DEMO_SUITE, EVALKIT


def evalkit(cwd, *args) -> subprocess.CompletedProcess:
    return subprocess.run([EVALKIT, *map(str, args)], capture_output=True, text=True, timeout=120, cwd=cwd)


def one_line_error(result, *words) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


@pytest.fixture
def workdir(tmp_path):
    """The command's working folder, deep inside tmp_path: whatever climbs out lands in tmp_path."""
    work = tmp_path / "a" / "b" / "c" / "work"
    work.mkdir(parents=True)
    return work


@pytest.mark.parametrize("run_id", ["..", "../../x", "a/b", "", "x y", "."])
@pytest.mark.parametrize("command", ["run", "evaluate"])
def test_a_bad_run_id_is_refused_before_anything_is_written(tmp_path, workdir, run_id, command):
    if command == "run":
        args = ["run", "--suite", DEMO_SUITE, "--model", "null", "--limit", "1", "--run-id", run_id, "--out", "runs"]
    else:
        (workdir / "preds.json").write_text("[]")
        args = ["evaluate", "preds.json", "--suite", DEMO_SUITE, "--run-id", run_id, "--out", "evals"]
    result = evalkit(workdir, *args)
    one_line_error(result, "--run-id", "letters, digits")
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b", "c", *(["preds.json"] * (command != "run")),
                                                          "work"]  # fmt: skip
