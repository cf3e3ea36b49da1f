"""`evalkit run` with a model whose server answers 500 to everything, beside a healthy one: its
attempts end as `endpoint_error`, are counted as errors and kept out of every score (no 0 % for the
model: no score), the failing endpoint is told once while the run goes, and the run exits 3. Once
the server is healthy, the command the run printed (`evalkit run --run-id errs --retry-errors
--out ...`, nothing else) runs exactly those attempts again (new rows appended, the latest wins) and
they count like any other; each row keeps its own trajectory (the errored one's is not overwritten)."""

import json
import re
import shlex
from pathlib import Path

import pytest
from conftest import run_evalkit
from hostile_server import HostileServer, turn
from toy import BASE_FILES, POWER

pytestmark = pytest.mark.integration

SOLVE = [
    [turn(("write_file", {"path": "calc/__init__.py", "content": BASE_FILES["calc/__init__.py"] + POWER}))],
    [turn(("submit", {"summary": "Added power() to calc/__init__.py."}))],
]
SCENARIOS = {"good": SOLVE, "broken": [[{"status": 500, "body": {"error": {"message": "backend exploded"}}}]]}


def config_text(server: HostileServer, flaky_scenario: str) -> str:
    common = 'model = "hostile"\nmax_retries = 1\nretry_base_s = 0.05\n'
    return (
        f'[models.steady]\nbase_url = "{server.url("good")}"\n{common}'
        f'[models.flaky]\nbase_url = "{server.url(flaky_scenario)}"\n{common}'
    )


def by_model(run_dir: Path) -> dict[str, dict]:
    return {entry["model"]: entry for entry in json.loads((run_dir / "summary.json").read_text())["models"]}


def rows_of(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(toy_suite_dir, docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("endpoint-errors")
    config = out / "evalkit.toml"
    args = ["run", "--suite", toy_suite_dir, "-m", "steady", "-m", "flaky", "--samples", "2", "--config", config,
            "--run-id", "errs", "--out", out]  # fmt: skip
    with HostileServer(SCENARIOS, models=["hostile"]) as server:
        config.write_text(config_text(server, "broken"))
        first = run_evalkit(*args)
        first_rows, first_summary = rows_of(out / "errs"), by_model(out / "errs")
        before = server.requests.copy()
        server.scenarios["broken"] = SOLVE  # the endpoint is back, at the same URL
        printed = re.search(r"run them again with `([^`]+)`", first.stdout)
        assert printed, first.stdout[-3000:]
        retried = run_evalkit(*shlex.split(printed[1])[1:])
        requests = dict(server.requests - before)  # the retry's requests only
    return first, first_rows, first_summary, retried, out / "errs", requests


def test_errored_attempts_are_counted_not_scored_and_the_run_exits_3(runs):
    first, rows, summary, _, _, _ = runs
    assert first.returncode == 3, first.stderr[-3000:]
    assert sorted((r["model"], r["stop_reason"]) for r in rows) == [
        ("flaky", "endpoint_error"),
        ("flaky", "endpoint_error"),
        ("steady", "submitted"),
        ("steady", "submitted"),
    ]
    flaky, steady = summary["flaky"], summary["steady"]
    assert (flaky["attempts"], flaky["scored_attempts"], flaky["error_kinds"]) == (2, 0, {"endpoint_error": 2})
    assert flaky["resolved_rate"]["mean"] is None and flaky["axes"]["composite"]["mean"] is None  # no score, not 0
    assert steady["resolved_rate"]["mean"] == 1.0 and steady["errors"] == 0
    told = "2 errors: endpoint_error ×2 — not scored; run them again with "
    told += "`evalkit run --run-id errs --retry-errors --out "
    assert told in first.stdout
    flaky_row = next(line for line in first.stdout.splitlines() if "flaky" in line)
    assert "error" in flaky_row and "0.0%" not in flaky_row


def test_a_failing_endpoint_is_told_once_per_reason_while_the_run_goes(runs):
    first = runs[0]
    failing = [line for line in first.stderr.splitlines() if ": failing, " in line]
    assert len(failing) == 1, failing  # 4 failed requests, one reason: one line
    assert "/broken/v1" in failing[0] and "server_error (HTTP 500): backend exploded" in failing[0]


def test_retry_errors_runs_exactly_the_errored_attempts_and_they_then_count(runs):
    _, first_rows, _, retried, run_dir, requests = runs
    assert retried.returncode == 0, retried.stderr[-3000:]
    assert "2 finished attempts kept, 2 to go" in retried.stderr
    rows = rows_of(run_dir)
    assert rows[: len(first_rows)] == first_rows  # appended, never rewritten
    new = rows[len(first_rows) :]
    assert sorted((r["model"], r["sample"], r["stop_reason"], r["resolved"]) for r in new) == [
        ("flaky", 0, "submitted", True),
        ("flaky", 1, "submitted", True),
    ]
    assert requests == {"broken": 4}  # flaky's 2 attempts again, 2 turns each; steady's not re-run
    summary = by_model(run_dir)
    assert summary["flaky"]["resolved_rate"]["mean"] == 1.0 and summary["flaky"]["errors"] == 0
    assert summary["flaky"]["scored_attempts"] == 2 and summary["steady"]["attempts"] == 2
    assert len((run_dir / "scores.jsonl").read_text().splitlines()) == 4  # one row per attempt, the latest
    assert "not scored" not in retried.stdout


def test_each_row_keeps_its_own_trajectory_when_an_attempt_runs_again(runs):
    _, first_rows, _, _, run_dir, _ = runs
    rows = rows_of(run_dir)
    assert len({r["trajectory"] for r in rows}) == len(rows) == 6  # none shared, none overwritten
    for row in rows:
        events = [json.loads(line) for line in (run_dir / row["trajectory"]).read_text().splitlines()]
        assert [e["stop_reason"] for e in events if e["type"] == "stop"] == [row["stop_reason"]], row["trajectory"]
        assert (events[0]["model"], events[0]["sample"]) == (row["model"], row["sample"])
    first = {(r["model"], r["sample"]): r["trajectory"] for r in first_rows}
    again = [r for r in rows[len(first_rows) :]]
    assert [Path(r["trajectory"]).name for r in again] == [
        Path(first[r["model"], r["sample"]]).name.replace(".jsonl", ".try2.jsonl") for r in again
    ]
