"""The CLI on run ids: a bad `--run-id` writes nothing, a run id alone resumes (or says why it
cannot: --skip-invalid as recorded, the endpoints checked first), options that disagree with
run.json are refused, and every command taking a run folder takes a run id. None of these reach
the Docker engine."""

import json
import socket
import subprocess

import pytest
from conftest import DEMO_SUITE, EVALKIT
from toy import write_toy_suite

from evalkit.models.endpoint import ModelSpec, resolve_model
from evalkit.runs.store import RunManifest, RunOptions, RunStore
from evalkit.tasks import load_suite

NOW = "2026-01-01T00:00:00+00:00"


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


def test_run_without_a_model_or_a_run_to_resume_is_one_line(workdir):
    one_line_error(evalkit(workdir, "run"), "--model")
    one_line_error(evalkit(workdir, "run", "--run-id", "nothing-here"), "--run-id nothing-here", "--model")
    assert list(workdir.iterdir()) == []


@pytest.fixture
def recorded_run(workdir, toy_suite_dir):
    """A run folder whose run.json records the toy suite and the null model."""
    store = RunStore(workdir / "reports" / "runs" / "r1")
    store.open()
    store.write_manifest(
        RunManifest(run_id="r1", suite=toy_suite_dir.name, suite_path=str(toy_suite_dir), tasks=["calc-power"],
                    models={"null": resolve_model("null", {}).public()}, samples=1, created_at=NOW, updated_at=NOW)
    )  # fmt: skip
    return store


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--model", "oracle"], ["--model oracle: run `r1` has null"]),
        (["--suite", DEMO_SUITE], ["--suite", "is of suite"]),
        (["--temperature", "0.5"], ["--temperature", "give --model too"]),
        (["--max-turns", "3"], ["--max-turns 3"]),
    ],
)
def test_options_that_disagree_with_run_json_are_refused(workdir, recorded_run, options, words):
    before = recorded_run.results_path.parent.joinpath("run.json").read_text()
    one_line_error(evalkit(workdir, "run", "--run-id", "r1", *options), *words)
    assert recorded_run.results_path.parent.joinpath("run.json").read_text() == before


def test_a_run_whose_suite_is_gone_says_to_give_suite(workdir, recorded_run):
    manifest = json.loads((recorded_run.dir / "run.json").read_text())
    (recorded_run.dir / "run.json").write_text(json.dumps({**manifest, "suite_path": "moved/away"}))
    one_line_error(evalkit(workdir, "run", "--run-id", "r1"), "moved/away is gone; give --suite")


@pytest.mark.parametrize(
    "args",
    [["score", "nope"], ["integrity", "nope"], ["compare", "nope", "r1"], ["compare", "r1", "nope"],
     ["report", "nope"], ["run", "--model", "null", "--baseline", "nope"]],
)  # fmt: skip
def test_commands_taking_a_run_folder_say_in_one_line_when_there_is_none(workdir, recorded_run, args):
    one_line_error(evalkit(workdir, *args), "no run folder nope and no run `nope` under reports/runs")


def test_commands_taking_a_run_folder_take_its_id(workdir, recorded_run):
    """`r1` has run.json and no results yet: each command gets as far as saying so about reports/runs/r1."""
    for args, words in (
        (["integrity", "r1"], "reports/runs/r1: no results.jsonl"),
        (["score", "r1"], "reports/runs/r1: no results.jsonl"),
        (["compare", "r1", "r1"], "reports/runs/r1: no results.jsonl"),
        (["report", "r1"], "reports/runs/r1: no finished attempt yet"),
    ):
        one_line_error(evalkit(workdir, *args), words)


def test_a_run_id_alone_skips_as_the_run_did_and_checks_its_endpoints_before_writing(workdir):
    """run.json records --skip-invalid and a model whose server is gone: `run --run-id r2
    --retry-errors` loads the suite as the run did (the bad task skipped, not fatal), then the
    preflight stops it in one line, run.json untouched."""
    suite = write_toy_suite(workdir / "suite")
    (suite / "broken").mkdir()
    (suite / "broken" / "task.toml").write_text('prompt = "x"\nrepo = "calc"\nnot_a_key = 1\n')
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    store = RunStore(workdir / "reports" / "runs" / "r2")
    store.open()
    store.write_manifest(
        RunManifest(run_id="r2", suite=load_suite(suite).name, suite_path=str(suite), tasks=["calc-power"],
                    models={"gone": ModelSpec(name="gone", model="m", base_url=url).public()}, samples=1,
                    created_at=NOW, updated_at=NOW, options=RunOptions(skip_invalid=True))
    )  # fmt: skip
    before = (store.dir / "run.json").read_text()
    result = evalkit(workdir, "run", "--run-id", "r2", "--retry-errors")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("skipped ") and "broken" in lines[0], lines
    refused = f"error: model `gone` at {url}: connection refused; is the server running? (--no-preflight skips"
    assert lines[-1] == refused + " this check)"
    assert (store.dir / "run.json").read_text() == before
