"""Four-axis scoring end to end: a clean and a sloppy trajectory that both resolve the task are
told apart on quality, interaction and the composite (and not on correctness); `evalkit score`
reproduces a run's scores and changes only what the new settings change; a reviewer model's
verdict is recorded apart."""

import json

import pytest
from conftest import run_evalkit
from hostile_server import HostileServer, models_config, turn
from toy import BASE_FILES, POWER

import evalkit

pytestmark = pytest.mark.integration

SLOPPY_SOLUTION = BASE_FILES["calc/__init__.py"] + POWER.replace(
    "    return result\n", '    print("debug", result)\n    return result\n'
)
SLOPPY_TURNS = [
    ("bash", json.dumps({"command": "ls"})),
    ("bash", json.dumps({"command": "ls"})),
    ("bash", "{'command': 'cat calc/__init__.py'"),
    ("read_file", json.dumps({"path": "calc/__init__.py"})),
    ("read_file", json.dumps({"path": "calc/__init__.py"})),
    ("write_file", json.dumps({"path": "calc/__init__.py", "content": SLOPPY_SOLUTION})),
    ("write_file", json.dumps({"path": "scratch.py", "content": "from calc import power\nprint(power(2, 10))\n"})),
    ("submit", json.dumps({"summary": "done"})),
]


def sloppy_trajectory(path, prompt):
    events = [{"type": "message", "message": {"role": "user", "content": prompt}}]
    for i, (name, arguments) in enumerate(SLOPPY_TURNS):
        call = {"id": f"s{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
        events.append({"type": "message", "message": {"role": "assistant", "content": None, "tool_calls": [call]}})
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


@pytest.fixture(scope="module")
def scored_run(toy_suite_dir, toy_task, docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("scored")
    sloppy = sloppy_trajectory(out / "sloppy.jsonl", toy_task.prompt)
    result = run_evalkit("run", "--suite", toy_suite_dir, "--model", "oracle", "--model", f"replay:{sloppy}",
                         "--run-id", "axes", "--out", out)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    return result, out / "axes", f"replay:{sloppy}"


def scores_of(run_dir):
    return {row["model"]: row for row in map(json.loads, (run_dir / "scores.jsonl").read_text().splitlines())}


def test_clean_and_sloppy_both_resolve_and_differ_where_they_should(scored_run):
    _, run_dir, sloppy_name = scored_run
    scores = scores_of(run_dir)
    clean, sloppy = scores["oracle"], scores[sloppy_name]
    assert clean["correctness"] == sloppy["correctness"]  # both resolved: no difference there
    assert clean["correctness"]["resolved"] and clean["correctness"]["score"] == 1.0
    assert clean["quality"]["score"] >= 0.95 and clean["interaction"]["score"] == 1.0
    assert sloppy["quality"]["debug_prints"] == 2 and sloppy["quality"]["stray_files"] == [
        "scratch.py"
    ]  # one print in calc, one in scratch.py
    assert sloppy["quality"]["extra_files"] == ["scratch.py"]
    assert sloppy["quality"]["score"] < clean["quality"]["score"] - 0.1
    counts = sloppy["interaction"]["counts"]
    assert counts["malformed_call"] == 1 and counts["repeated_call"] == 2 and counts["unspecific_final"] == 1
    assert sloppy["interaction"]["score"] < clean["interaction"]["score"] - 0.2
    assert sloppy["efficiency"]["turns"] > clean["efficiency"]["turns"]
    assert sloppy["efficiency"]["score"] < clean["efficiency"]["score"]
    assert sloppy["composite"] < clean["composite"]
    assert clean["efficiency"]["cost_usd"] == 0.0  # built-in models are priced at zero


def test_summary_and_the_python_api(scored_run):
    result, run_dir, sloppy_name = scored_run
    summary = json.loads((run_dir / "summary.json").read_text())
    by_model = {m["model"]: m for m in summary["models"]}
    assert by_model["oracle"]["resolved_rate"] == {"mean": 1.0, "ci95": [1.0, 1.0]}
    assert by_model["oracle"]["pass_at_k"] == {"1": 1.0} and by_model["oracle"]["cost_per_resolved"] == 0.0
    assert summary["weights"] == {"correctness": 0.6, "quality": 0.15, "efficiency": 0.1, "interaction": 0.15}
    frame = evalkit.load_results(run_dir)
    assert len(frame) == 2 and {"quality", "efficiency", "interaction", "composite", "quality.hygiene"} <= set(frame)
    assert frame.set_index("model").loc[sloppy_name, "interaction.repeated_call"] == 2
    assert "composite" in result.stdout and "quality" in result.stdout


def test_rescoring_reproduces_and_changes_only_what_changed(scored_run, tmp_path):
    _, run_dir, _ = scored_run
    before = (run_dir / "scores.jsonl").read_text()
    same = run_evalkit("score", run_dir)
    assert same.returncode == 0, same.stderr[-2000:]
    assert (run_dir / "scores.jsonl").read_text() == before
    config = tmp_path / "evalkit.toml"
    config.write_text("[scoring.weights]\ncorrectness = 1\nquality = 0\nefficiency = 0\ninteraction = 0\n")
    reweighted = run_evalkit("score", run_dir, "--config", config)
    assert reweighted.returncode == 0, reweighted.stderr[-2000:]
    old = {r["model"]: r for r in map(json.loads, before.splitlines())}
    for model, row in scores_of(run_dir).items():
        assert row["composite"] == 1.0 and row["weights"]["correctness"] == 1.0
        for axis in ("correctness", "quality", "efficiency", "interaction", "review"):
            assert row[axis] == old[model][axis], axis
    run_evalkit("score", run_dir)  # back to the defaults for the other tests
    assert (run_dir / "scores.jsonl").read_text() == before


VERDICT = {"does_what_asked": 8, "in_scope": 9, "readable": 6, "would_merge": False, "score": 7,
           "lines": [{"path": "calc/__init__.py", "line": 12, "why": "debug print"}], "summary": "Prints debug output."}
INJECTED = "x' ; touch pwned ; echo '"  # a reviewer's argument trying the shell its tools run in


def reviewer_script():
    """A reviewer reading both trees and the reference's, trying to break out (a path outside, a
    search and a path that would run commands if unquoted), looking for what that would have
    written, then answering."""
    reads = [
        ("read_file", {"path": "calc/__init__.py", "tree": "candidate"}),
        ("read_file", {"path": "calc/__init__.py", "tree": "base"}),
        ("search", {"pattern": "def power", "tree": "reference"}),
        ("read_file", {"path": "../../../etc/passwd"}),
        ("search", {"pattern": INJECTED, "path": "$(touch pwned2)"}),
    ]
    look = [("read_file", {"path": "pwned"}), ("list_files", {"tree": "candidate"})]
    return [[turn(*reads)], [turn(*look)], [turn(("verdict", VERDICT))]]


def tool_answers(run_dir, row):
    events = [json.loads(line) for line in (run_dir / row["review"]["transcript"]).read_text().splitlines()]
    return [e["message"]["content"] for e in events if e["type"] == "message" and e["message"]["role"] == "tool"]


def test_an_agentic_reviewer_reads_the_trees_read_only_and_is_recorded_apart(scored_run, tmp_path):
    _, run_dir, sloppy_name = scored_run
    before = {m: r["composite"] for m, r in scores_of(run_dir).items()}
    with HostileServer({"reviewer": reviewer_script()}) as server:
        config = tmp_path / "evalkit.toml"
        config.write_text(f'[models.reviewer]\nmodel = "r"\nbase_url = "{server.url("reviewer")}"\n')
        result = run_evalkit("score", run_dir, "--config", config, "--reviewer", "reviewer")
    assert result.returncode == 0, result.stderr[-2000:]
    rows = scores_of(run_dir)
    for model, row in rows.items():
        review = row["review"]
        assert review["score"] == 0.7 and review["reviewer"] == "reviewer" and review["mode"] == "agentic"
        assert review["candidate_applied"]  # the candidate tree holds the change (read below)
        assert review["answers"]["lines"] == VERDICT["lines"] and review["turns"] == 3 and review["tool_calls"] == 7
        assert row["composite"] == before[model]  # beside the axes, not in the composite
        candidate, base, reference, outside, injected, pwned, listing = tool_answers(run_dir, row)
        assert ("print(\"debug\"" in candidate) == (model == sloppy_name) and "def power" not in base
        assert "calc/__init__.py" in reference and "def power" in reference
        assert "outside the repository" in outside and "$(touch pwned2)" in injected  # a name, not a command
        assert "no such file" in pwned and "pwned" not in listing and "calc/__init__.py" in listing
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["reviewers"][0]["reviewer"] == "reviewer" and summary["reviewers"][0]["reviews"] == 2
    kept = run_evalkit("score", run_dir)  # no reviewer this time: earlier verdicts are kept
    assert kept.returncode == 0 and all(r["review"]["score"] == 0.7 for r in scores_of(run_dir).values())
    weighted = tmp_path / "weighted.toml"
    weighted.write_text("[scoring.weights]\nreviewer = 1\n")
    assert run_evalkit("score", run_dir, "--config", weighted).returncode == 0
    assert all(r["weights"]["reviewer"] > 0 and r["composite"] != before[m] for m, r in scores_of(run_dir).items())
    run_evalkit("score", run_dir)  # back to the defaults for the other tests


def test_a_reviewer_that_fails_is_recorded_and_scoring_goes_on(scored_run, tmp_path):
    _, run_dir, _ = scored_run
    mute = [[turn(content="Looks fine to me.")]]
    wrong = [[turn(("verdict", {**VERDICT, "score": 12}))]]
    with HostileServer({"mute": mute, "wrong": wrong, "down": [[{"status": 500}]]}) as server:
        config = tmp_path / "evalkit.toml"
        config.write_text(models_config(server, ["mute", "wrong", "down"], max_retries=0))
        errors = {}
        for name in ("mute", "wrong", "down"):
            result = run_evalkit("score", run_dir, "--config", config, "--reviewer", name, "--reviewer-mode=no-tools")
            assert result.returncode == 0, result.stderr[-2000:]
            errors[name] = {r["review"]["error"] for r in scores_of(run_dir).values() if r["review"]["score"] is None}
    assert all("never called `verdict`" in e for e in errors["mute"]) and errors["mute"]
    assert all("out of schema: score" in e for e in errors["wrong"]) and errors["wrong"]
    assert all(e.startswith("endpoint error") for e in errors["down"]) and errors["down"]
    assert json.loads((run_dir / "summary.json").read_text())["reviewers"][0]["failed"] == 2
    run_evalkit("score", run_dir)
