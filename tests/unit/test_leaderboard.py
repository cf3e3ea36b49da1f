"""The HTML leaderboard without a browser: the files it writes, their figures against the runs'
own summary.json and scores.jsonl, HTML and script payloads kept inert, the Pareto frontier, and
the published-scores readers.

The runs are real run folders: attempts appended with RunStore, trajectories written with
TrajectoryWriter, and scores.jsonl / summary.json made by evalkit's own `score_run` over a two-task
copy of the toy suite (git and ruff on the host, no Docker)."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.records import AttemptRecord
from evalkit.report.leaderboard.output import (
    merge_published,
    pareto_frontier,
    published_from_config,
    read_published,
    script_json,
    trajectory_view,
    write_leaderboard,
)
from evalkit.runs.store import RunManifest, RunStore
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.run_scores import run_tasks, score_run
from evalkit.tasks import SkippedTask
from evalkit.trajectory import TrajectoryWriter

PAYLOAD = "</script><script>window.pwned=1</script>"
IMG = '<img src=x onerror="window.pwned=2">'
EVIL = PAYLOAD + IMG  # a model name, and text in a patch, a tool output, a final message
TASKS = ("calc-power", "calc-power-again")


def write_attempt(store: RunStore, task, model: str, endpoint_model: str, sample: int, **kind) -> None:
    """One attempt as a run leaves it: its trajectory, then its row in results.jsonl (`integrity`:
    what the scoring sandbox recorded; `command`: the one bash call, scanned by `evalkit score`)."""
    resolved = kind.get("resolved", False)
    patch = kind.get("patch", task.patch if resolved else "")
    tool_output = kind.get("tool_output", "3 passed")
    final = kind.get("final", "Added power to calc/__init__.py.")
    stop, error = kind.get("stop", "submitted"), kind.get("error")
    trajectory = f"trajectories/{task.id}__{hashlib.sha256(model.encode()).hexdigest()[:12]}__{sample}.jsonl"
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": kind.get("command", "pytest -q")})},
    }
    with TrajectoryWriter(store.dir / trajectory) as writer:
        writer.event("start", task_id=task.id, model=model, sample=sample, limits=task.limits.model_dump())
        writer.message({"role": "system", "content": "You are a software engineer."})
        writer.message({"role": "user", "content": task.prompt})
        writer.event(
            "model_call", turn=1, latency_s=0.2, usage={"total_tokens": 900}, finish_reason="tool_calls", retries=[]
        )
        writer.message({"role": "assistant", "content": "Running the tests first.", "tool_calls": [call]})
        writer.message({"role": "tool", "tool_call_id": "c1", "content": tool_output})
        writer.event(
            "tool", turn=1, call_id="c1", name="bash", fault=None, exit_code=0, truncated=False, sandbox_s=0.01
        )
        writer.event("stop", stop_reason=stop, error=error)
    f2p, p2p = task.tests.fail_to_pass, task.tests.pass_to_pass
    tokens = kind.get("tokens", 12_000)
    store.append(
        AttemptRecord(
            run_id=store.dir.name,
            task_id=task.id,
            model=model,
            sample=sample,
            resolved=resolved,
            tests_resolved=kind.get("tests_resolved"),
            integrity=kind.get("integrity", {}),
            stop_reason=stop,
            error=error,
            endpoint={"name": model, "model": endpoint_model},
            usage={
                "prompt_tokens": tokens - 1000,
                "completion_tokens": 1000,
                "cached_tokens": 0,
                "total_tokens": tokens,
            },
            turns=1,
            tool_calls=1,
            agent_s=20.0,
            duration_s=25.0,
            final_message=final,
            model_patch=patch,
            patch_applied=True,
            trajectory=trajectory,
            fail_to_pass={"passed": f2p if resolved else [], "failed": [] if resolved else f2p},
            pass_to_pass={"passed": p2p, "failed": []},
        )
    )


def two_task_suite(toy_suite_dir: Path, root: Path) -> Path:
    """A copy of the toy suite under `root` with its task twice (TASKS)."""
    suite = root / "suite"
    shutil.copytree(toy_suite_dir, suite)
    shutil.copytree(suite / "calc-power", suite / "calc-power-again")
    return suite


def make_run(root: Path, suite_dir: Path, run_id: str, plan: dict[str, tuple[str, list]], samples: int) -> Path:
    """plan: model → (API model id, [per task: [per sample: attempt kind]])."""
    store = RunStore(root / run_id)
    store.open()
    now = "2026-01-01T00:00:00+00:00"
    store.write_manifest(
        RunManifest(
            run_id=run_id,
            suite="toy",
            suite_path=str(suite_dir),
            tasks=list(TASKS),
            models={m: {"name": m, "model": api} for m, (api, _) in plan.items()},
            samples=samples,
            created_at=now,
            updated_at=now,
        )
    )
    tasks = run_tasks(store)
    for model, (api, per_task) in plan.items():
        for task_id, kinds in zip(TASKS, per_task, strict=False):
            for sample, kind in enumerate(kinds):
                write_attempt(store, tasks[task_id], model, api, sample, **kind)
    score_run(store, tasks, ScoringSettings())
    return store.dir


@pytest.fixture(scope="module")
def runs(toy_suite_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("leaderboard")
    suite = root / "suite"
    shutil.copytree(toy_suite_dir, suite)
    shutil.copytree(suite / "calc-power", suite / "calc-power-again")
    ok = {"resolved": True}
    evil = {
        "patch": f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+{EVIL}\n",
        "final": EVIL,
        "tool_output": EVIL,
    }
    down = {"stop": "endpoint_error", "error": "HTTP 500 after 6 retries", "final": None, "tokens": 0}
    run_a = make_run(
        root / "runs",
        suite,
        "a",
        {
            "gpt-4o": ("gpt-4o", [[ok, ok], [ok, ok]]),
            "gpt-4o-mini": ("gpt-4o-mini", [[ok, {}], [{}, {}]]),
            EVIL: ("no-price-model", [[evil, evil], [evil, {}]]),
            "flaky": ("gpt-4.1", [[down, down], [down, {}]]),
        },
        samples=2,
    )
    run_b = make_run(root / "runs", suite, "b", {"gpt-4o": ("gpt-4o", [[{}]])}, samples=1)
    out = root / "report"
    page = write_leaderboard(
        [run_a, run_b], out, {"gpt-4o": {"swe-bench-verified": 0.33}, "no-price-model": {"swe-bench-lite": 0.1}}
    )
    return {"a": run_a, "b": run_b, "out": out, "page": page, "root": root}


def rows_of(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))


def board(runs) -> dict:
    return json.loads((runs["out"] / "leaderboard.json").read_text())


def model_rows(runs) -> dict[str, dict]:
    (suite,) = board(runs)["suites"]
    return {row["label"]: row for row in suite["models"]}


def summary_entry(run_dir: Path, model: str) -> dict:
    summary = json.loads((run_dir / "summary.json").read_text())
    return next(entry for entry in summary["models"] if entry["model"] == model)


def decode_attempt(path: Path) -> dict:
    """attempts/<n>.js back to the detail: `window.__evalkitAttempt(n,JSON.parse("..."));`."""
    match = re.fullmatch(r"window\.__evalkitAttempt\((\d+),JSON\.parse\((\".*\")\)\);\n", path.read_text(), re.S)
    assert match, path.read_text()[:200]
    detail = json.loads(json.loads(match[2]))
    assert detail["n"] == int(match[1]) == int(path.stem)
    return detail


# -- files and figures ---------------------------------------------------------------------------
def test_writes_the_page_the_data_files_and_one_script_per_attempt(runs):
    out = runs["out"]
    assert runs["page"] == out / "index.html"
    for name in ("index.html", "leaderboard.json", "leaderboard.csv", "attempts.csv"):
        assert (out / name).stat().st_size > 0, name
    attempts = sum(len(RunStore(runs[r]).records()) for r in ("a", "b"))
    assert attempts == 17
    assert sorted(int(p.stem) for p in (out / "attempts").iterdir()) == list(range(attempts))
    assert not list(out.glob(".*.tmp"))


def test_each_row_has_the_figures_of_its_runs_summary_json(runs):
    rows = model_rows(runs)
    assert len(rows) == 5
    for row in rows.values():
        entry = summary_entry(runs[row["run_id"]], row["model"])
        assert row["source"] == "summary.json"
        assert row["resolved_rate"] == entry["resolved_rate"]
        assert row["pass_at_k"] == entry["pass_at_k"] and row["best_of_k"] == entry["best_of_k"]
        for axis in ("quality", "efficiency", "interaction", "composite"):
            assert row["axes"][axis] == entry["axes"][axis], (row["label"], axis)
        for key in ("attempts", "tasks", "samples", "resolved", "median_tokens", "cost_per_task", "cost_per_resolved"):
            assert row[key] == entry[key], (row["label"], key)
        assert row["errors"] == entry["errors"]
        cost = entry["cost_usd"]
        scored = entry["scored_attempts"]  # errored attempts are in no figure, cost included
        assert row["cost_per_attempt"] == (None if cost is None else pytest.approx(cost / scored, abs=1e-6))
    assert rows["gpt-4o-mini"]["resolved_rate"]["mean"] == 0.25  # task 1: 1 of 2, task 2: 0 of 2
    assert rows["gpt-4o-mini"]["pass_at_k"]["2"] == 0.5
    assert rows[EVIL]["cost_per_task"] is None and rows[EVIL]["cost_per_attempt"] is None  # no price
    assert rows["flaky"]["errors"] == 3 and rows["flaky"]["error_kinds"] == {"endpoint_error": 3}
    assert (rows["flaky"]["attempts"], rows["flaky"]["scored_attempts"], rows["flaky"]["tasks"]) == (4, 1, 1)


def test_a_model_in_two_runs_of_a_suite_has_a_row_per_run(runs):
    rows = model_rows(runs)
    first, second = rows["gpt-4o (a)"], rows["gpt-4o (b)"]  # a baseline and a new run stay apart
    assert (first["model"], first["run_id"], first["attempts"], first["resolved_rate"]["mean"]) == (
        "gpt-4o",
        "a",
        4,
        1.0,
    )
    assert (second["model"], second["run_id"], second["attempts"], second["resolved_rate"]["mean"]) == (
        "gpt-4o",
        "b",
        1,
        0,
    )
    assert rows["gpt-4o-mini"]["label"] == "gpt-4o-mini"  # unambiguous names keep no run id
    scores = [json.loads(line) for line in (runs["a"] / "scores.jsonl").read_text().splitlines()]
    costs = [s["efficiency"]["cost_usd"] for s in scores if s["model"] == "gpt-4o"]
    assert first["cost_usd"] == pytest.approx(sum(costs), abs=1e-6)


def test_without_summary_json_the_figures_are_recomputed_the_same(runs, tmp_path):
    run = tmp_path / "a"
    shutil.copytree(runs["a"], run)
    (run / "summary.json").unlink()
    write_leaderboard([run], tmp_path / "out")
    (suite,) = json.loads((tmp_path / "out" / "leaderboard.json").read_text())["suites"]
    for row in suite["models"]:
        entry = summary_entry(runs["a"], row["model"])
        assert row["source"] == "recomputed"
        assert (row["resolved_rate"], row["axes"]["composite"]) == (entry["resolved_rate"], entry["axes"]["composite"])
        assert (row["pass_at_k"], row["cost_per_task"]) == (entry["pass_at_k"], entry["cost_per_task"])


def test_leaderboard_csv_has_one_row_per_suite_and_model(runs):
    rows = rows_of(runs["out"] / "leaderboard.csv")
    by_model = {(r["model"], r["run_id"]): r for r in rows}
    assert len(rows) == 5 and len(by_model) == 5
    for row in model_rows(runs).values():
        line = by_model[(row["model"], row["run_id"])]
        assert float(line["resolved_rate"]) == row["resolved_rate"]["mean"]
        assert float(line["composite"]) == row["axes"]["composite"]["mean"]
        assert line["suite"] == "toy"
    by_model = {r["model"]: r for r in rows if r["run_id"] == "a"}
    assert by_model["gpt-4o"]["published_swe-bench-verified"] == "0.33"
    assert by_model[EVIL]["published_swe-bench-lite"] == "0.1"  # matched by the API model id
    assert by_model[EVIL]["cost_per_task"] == ""
    assert by_model["gpt-4o-mini"]["pass_at_2"] == "0.5"


def test_attempts_csv_has_one_row_per_attempt_with_its_scores(runs):
    rows = rows_of(runs["out"] / "attempts.csv")
    assert len(rows) == 17
    scores = {
        (s["run_id"], s["task_id"], s["model"], s["sample"]): s
        for r in ("a", "b")
        for s in map(json.loads, (runs[r] / "scores.jsonl").read_text().splitlines())
    }
    for row in rows:
        score = scores[(row["run_id"], row["task_id"], row["model"], int(row["sample"]))]
        assert float(row["composite"]) == score["composite"]
        assert row["resolved"] == str(score["correctness"]["resolved"])
        assert row["status"] == ("r" if score["correctness"]["resolved"] else "e" if row["error"] else "f")
        detail = decode_attempt(runs["out"] / "attempts" / f"{row['attempt']}.js")
        assert (detail["task_id"], detail["model"], detail["sample"]) == (
            row["task_id"],
            row["model"],
            int(row["sample"]),
        )


def test_pareto_frontier_in_the_data(runs):
    (suite,) = board(runs)["suites"]
    rows = model_rows(runs)
    assert suite["frontier"] == ["gpt-4o-mini", "gpt-4o (a)"]  # cheaper and worse, dearer and better
    assert rows["gpt-4o-mini"]["cost_per_attempt"] < rows["gpt-4o (a)"]["cost_per_attempt"]
    assert not rows[EVIL]["pareto"]  # no price
    assert not rows["flaky"]["pareto"] and not rows["gpt-4o (b)"]["pareto"]  # beaten by gpt-4o-mini on both


def test_matrix_data_and_suite_statistics(runs):
    (suite,) = board(runs)["suites"]
    assert suite["tasks"] == list(TASKS)
    assert [m["label"] for m in suite["models"]][0] == "gpt-4o (a)"  # best resolved rate first
    assert len(suite["attempts"]) == 17
    statuses = {(suite["models"][a[2]]["label"], a[4]) for a in suite["attempts"]}
    assert ("flaky", "e") in statuses and ("gpt-4o (a)", "r") in statuses and (EVIL, "f") in statuses
    assert ("gpt-4o (b)", "f") in statuses and ("gpt-4o (b)", "r") not in statuses
    assert suite["stats"]["tasks"] == 2 and suite["stats"]["figures"]["fail_to_pass"]["median"] == 2
    assert "swebench_verified_mini" in board(runs)["reference"]["computed"]


def test_attempt_detail_has_prompt_diff_scores_tests_and_trajectory(runs):
    details = [decode_attempt(p) for p in (runs["out"] / "attempts").iterdir()]
    detail = next(
        d for d in details if (d["model"], d["task_id"], d["run_id"], d["sample"]) == ("gpt-4o", "calc-power", "a", 0)
    )
    assert detail["prompt"] == "Add integer power to calc."
    assert "+def power(a, b):" in detail["patch"]
    assert detail["scores"]["quality"]["parts"] and detail["scores"]["correctness"]["score"] == 1.0
    assert detail["tests"]["fail_to_pass"]["passed"] == [
        "tests/test_power.py::test_power",
        "tests/test_power.py::test_power_zero",
    ]
    kinds = [e["kind"] for e in detail["trajectory"]]
    assert kinds == ["start", "message", "message", "model_call", "message", "message", "stop"]
    call = detail["trajectory"][4]["tool_calls"][0]
    assert call == {"id": "c1", "name": "bash", "args": [["command", "pytest -q"]]}
    assert detail["trajectory"][5]["tool"]["name"] == "bash" and detail["trajectory"][5]["content"] == "3 passed"
    same = [d["n"] for d in details if (d["task_id"], d["model"], d["run_id"]) == ("calc-power", "gpt-4o", "a")]
    assert sorted(s[0] for s in detail["siblings"]) == sorted(same) and len(same) == 2  # run b's sample is not one


# -- payloads stay text --------------------------------------------------------------------------
def test_payloads_are_escaped_in_the_page(runs):
    html = runs["page"].read_text()
    assert "window.pwned" in html  # the model name is there, as data
    assert PAYLOAD not in html and "<img" not in html and 'onerror="' not in html
    assert html.lower().count("</script>") == 2 and html.lower().count("<script") == 2  # the data block and ours
    data = re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.S)[1]
    assert "<" not in data and ">" not in data and "&" not in data
    assert "\\u003c/script\\u003e\\u003cscript\\u003ewindow.pwned=1" in data
    assert EVIL in [m["model"] for m in json.loads(data)["suites"][0]["models"]]  # and decodes to the very string


def test_payloads_are_escaped_in_the_attempt_scripts(runs):
    scripts = {p: p.read_text() for p in (runs["out"] / "attempts").iterdir()}
    assert all("<" not in text and ">" not in text and "&" not in text for text in scripts.values())
    evil = [decode_attempt(p) for p, text in scripts.items() if "window.pwned=1" in text]
    assert len(evil) == 4
    with_patch = next(d for d in evil if d["patch"])
    assert EVIL in with_patch["patch"] and with_patch["final_message"] == EVIL
    assert with_patch["trajectory"][5]["content"] == EVIL  # the tool output, exactly


def test_content_security_policy_allows_only_the_page_script(runs):
    html = runs["page"].read_text()
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', html)[1].replace("&#39;", "'")
    inline = re.search(r"<script>(.*?)</script>", html, re.S)[1]
    digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    assert f"script-src 'self' 'sha256-{digest}'" in policy
    assert policy.startswith("default-src 'none';") and "img-src data:" in policy and "unsafe-inline" in policy
    assert "unsafe-inline" not in policy.split("script-src")[1].split(";")[0]
    assert "http" not in html.split("<body>")[0].replace("http-equiv", "")  # nothing to fetch in the head
    assert "innerHTML" not in inline and "insertAdjacentHTML" not in inline and "document.write" not in inline


def test_script_json_round_trips_and_cannot_close_a_tag():
    value = {"a": PAYLOAD, "b": "x & y > z", "c": "\u2028line\u2029", "__proto__": 1, "d": [1.5, None]}
    text = script_json(value)
    assert not set(text) & set("<>&\u2028\u2029")
    assert json.loads(text) == value


# -- rewriting and bad input ---------------------------------------------------------------------
def test_a_smaller_report_removes_the_attempt_files_it_no_longer_has(runs, tmp_path):
    out = tmp_path / "report"
    write_leaderboard([runs["a"], runs["b"]], out)
    (out / "attempts" / "notes.txt").write_text("mine")
    write_leaderboard([runs["b"]], out)
    assert sorted(p.name for p in (out / "attempts").iterdir()) == ["0.js", "notes.txt"]
    assert decode_attempt(out / "attempts" / "0.js")["run_id"] == "b"


def test_an_attempt_without_its_trajectory_still_has_its_prompt(runs, tmp_path):
    run = tmp_path / "b"
    shutil.copytree(runs["b"], run)
    for trajectory in (run / "trajectories").iterdir():
        trajectory.unlink()
    write_leaderboard([run], tmp_path / "out")
    detail = decode_attempt(tmp_path / "out" / "attempts" / "0.js")
    assert detail["prompt"] == "Add integer power to calc."  # from the suite
    assert detail["trajectory"] == [] and "is missing from the run folder" in detail["trajectory_note"]


def test_runs_of_two_suites_get_a_section_each(runs, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(runs["b"], other)
    manifest = json.loads((other / "run.json").read_text())
    (other / "run.json").write_text(json.dumps({**manifest, "run_id": "other", "suite": "other-suite"}))
    write_leaderboard([runs["a"], other], tmp_path / "out")
    suites = json.loads((tmp_path / "out" / "leaderboard.json").read_text())["suites"]
    assert [s["name"] for s in suites] == ["toy", "other-suite"]
    assert [row["label"] for row in suites[1]["models"]] == ["gpt-4o"]  # one run of that suite: no run id
    assert [a[0] for s in suites for a in s["attempts"]] == list(range(17))  # numbered across suites


def test_a_run_with_skipped_tasks_says_how_many_loaded_in_its_summary_and_on_the_page(runs, tmp_path):
    partial = tmp_path / "partial"
    shutil.copytree(runs["b"], partial)
    store = RunStore(partial)
    skipped = SkippedTask(task="calc-broken", file="suite/calc-broken/task.toml", reason="unknown key `timeout`")
    manifest = store.read_manifest()
    store.write_manifest(manifest.model_copy(update={"run_id": "partial", "skipped_tasks": [skipped]}))
    score_run(store, run_tasks(store), ScoringSettings())
    summary = json.loads((partial / "summary.json").read_text())
    assert (summary["tasks_loaded"], summary["tasks_total"]) == (2, 3)
    assert summary["skipped_tasks"] == [skipped.model_dump()]

    write_leaderboard([runs["a"], partial], tmp_path / "out")
    data = json.loads((tmp_path / "out" / "leaderboard.json").read_text())
    (suite,) = data["suites"]
    assert suite["loading"] == [
        {"runs": ["a"], "loaded": 2, "total": 2, "skipped": []},
        {"runs": ["partial"], "loaded": 2, "total": 3, "skipped": [skipped.model_dump()]},
    ]
    loaded = [(r["run_id"], r["tasks_loaded"], r["tasks_total"]) for r in data["runs"]]
    assert loaded == [("a", 2, 2), ("partial", 2, 3)]
    page = (tmp_path / "out" / "index.html").read_text()
    assert "suite/calc-broken/task.toml" in page and "skippedTasks(suite)" in page


def test_folders_that_are_not_scored_runs(runs, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    unscored = tmp_path / "unscored"
    shutil.copytree(runs["b"], unscored)
    (unscored / "scores.jsonl").unlink()
    for folder, words in ((empty, "not an evalkit run folder"), (unscored, "evalkit score")):
        with pytest.raises(EvalkitError, match=words) as caught:
            write_leaderboard([folder], tmp_path / "out")
        assert "\n" not in str(caught.value)
    skipped: list[str] = []
    page = write_leaderboard([empty, runs["b"], unscored], tmp_path / "out", on_skip=skipped.append)
    assert page.exists() and len(skipped) == 2
    with pytest.raises(EvalkitError, match="no scored run"):
        write_leaderboard([empty], tmp_path / "out", on_skip=skipped.append)
    with pytest.raises(EvalkitError, match="given twice"):
        write_leaderboard([runs["b"], runs["b"]], tmp_path / "out")


# -- Pareto frontier -----------------------------------------------------------------------------
def test_pareto_frontier_on_known_points():
    points = [(1.0, 0.5), (2.0, 0.6), (2.0, 0.4), (0.5, 0.5), (3.0, 0.6), (0.5, 0.5), (4.0, 0.9)]
    # (1, .5) loses to (.5, .5); (2, .4) and (3, .6) lose to (2, .6); the two (.5, .5) tie and both stay
    assert pareto_frontier(points) == [3, 5, 1, 6]
    assert pareto_frontier([]) == []
    assert pareto_frontier([(0.0, 0.0)]) == [0]
    assert pareto_frontier([(1.0, 0.2), (1.0, 0.3)]) == [1]  # same cost, resolves more
    assert pareto_frontier([(1.0, 0.3), (2.0, 0.3)]) == [0]  # same rate, cheaper


# -- published scores ----------------------------------------------------------------------------
def test_read_published(tmp_path):
    path = tmp_path / "published.csv"
    path.write_text(
        "model,benchmark,score\n"
        "gpt-4o,swe-bench-verified,0.33\n"
        "\n"
        " gpt-4o , SWE_bench_Lite , 0.2 \n"  # spaces and another spelling of the benchmark
        "claude,swe-bench-verified,0.7\n"
    )
    assert read_published(path) == {
        "gpt-4o": {"swe-bench-verified": 0.33, "swe-bench-lite": 0.2},
        "claude": {"swe-bench-verified": 0.7},
    }


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("name,bench,value\na,b,0.1\n", ":1: the header must be model,benchmark,score"),
        ("model,benchmark,score\ngpt-4o,swe-bench-verified,abc\n", ":2: score 'abc' is not a number"),
        (
            "model,benchmark,score\ngpt-4o,swe-bench-verified,33.2\n",
            ":2: score '33.2' must be a fraction between 0 and 1",
        ),
        ("model,benchmark,score\ngpt-4o,swe-bench-verified,nan\n", ":2: score 'nan' must be a fraction"),
        ("model,benchmark,score\ngpt-4o,0.33\n", ":2: expected 3 columns"),
        ("model,benchmark,score\n,swe-bench-verified,0.3\n", ":2: the model and the benchmark must not be empty"),
        ("model,benchmark,score\na,b,0.1\n\na,B,0.2\n", ":4: 'a' on 'b' given twice"),
        ('model,benchmark,score\n"a\nb",c,0.1\nx,"y,0.2\n', "not valid CSV|expected 3 columns"),
        ("", ":1: the header must be"),
    ],
)
def test_bad_published_rows_are_one_line(tmp_path, text, problem):
    path = tmp_path / "published.csv"
    path.write_text(text)
    with pytest.raises(EvalkitError, match=problem) as caught:
        read_published(path)
    assert "\n" not in str(caught.value) and str(path) in str(caught.value)


def test_published_file_problems(tmp_path):
    with pytest.raises(EvalkitError, match="no such file"):
        read_published(tmp_path / "missing.csv")
    (tmp_path / "latin.csv").write_bytes("model,benchmark,score\nmod\xe8le,b,0.1\n".encode("latin-1"))
    with pytest.raises(EvalkitError, match="not UTF-8"):
        read_published(tmp_path / "latin.csv")


def test_published_from_config_and_merge():
    config = {"published": {"gpt-4o": {"swe_bench_verified": 0.33}, "o3": {"SWE-bench-Lite": 0.5}}}
    assert published_from_config(config) == {"gpt-4o": {"swe-bench-verified": 0.33}, "o3": {"swe-bench-lite": 0.5}}
    assert published_from_config({}) == {}
    for bad, words in (
        ({"published": {"gpt-4o": {"swe_bench_verified": "high"}}}, "not a number"),
        ({"published": {"gpt-4o": {"swe_bench_verified": True}}}, "not a number"),
        ({"published": {"gpt-4o": 0.3}}, "must be a table"),
        ({"published": {"gpt-4o": {"swe_bench_verified": 1.5}}}, "between 0 and 1"),
    ):
        with pytest.raises(EvalkitError, match=words) as caught:
            published_from_config(bad, "my.toml")
        assert str(caught.value).startswith("my.toml: [published") and "\n" not in str(caught.value)
    merged = merge_published({"a": {"x": 0.1, "y": 0.2}}, {"a": {"x": 0.3}, "b": {"x": 0.4}})
    assert merged == {"a": {"x": 0.3, "y": 0.2}, "b": {"x": 0.4}}


def test_trajectory_view_keeps_malformed_arguments_as_sent():
    events = [
        {
            "type": "message",
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "1",
                        "function": {"name": "edit", "arguments": '{"path": "a.py", "new_string": "x = 1\\n"}'},
                    },
                    {"id": "2", "function": {"name": "bash", "arguments": '{"command": "ls"'}},
                    {"id": "3", "function": {"name": "bash", "arguments": "[1, 2]"}},
                ],
            },
        },
        {"type": "message", "message": {"role": "tool", "tool_call_id": "2", "content": "Error: malformed JSON"}},
        {"type": "tool", "call_id": "2", "name": "bash", "fault": "malformed_json", "exit_code": None},
        {"type": "correctness", "result": {"log": "x" * 30_000}},
    ]
    view, log = trajectory_view(events)
    calls = view[0]["tool_calls"]
    assert calls[0]["args"] == [["path", "a.py"], ["new_string", "x = 1\n"]]
    assert calls[1] == {"id": "2", "name": "bash", "raw": '{"command": "ls"'}
    assert calls[2]["raw"] == "[1, 2]"
    assert view[1]["tool"]["fault"] == "malformed_json" and view[1]["tool"]["name"] == "bash"
    assert len(log) < 21_000 and "characters left out" in log
