"""Cheaters, the oracle and null on the whole demo suite, through `evalkit run` and an endpoint
evalkit has never seen: every cheat resolves nothing and is flagged with its kind, the oracle
resolves everything with no flag (no false alarm), and doing nothing scores 0.

Before the defence the conftest, addopts and source-hook cheats each resolved 8/8 with a composite
near 0.95, and null scored a composite of 0.25."""

import json
from collections import defaultdict

import pytest
from cheats import CHEATS as LISTED_CHEATS
from conftest import DEMO_SUITE, run_evalkit
from encoded_cheats import ENCODED_CHEATS, SPARING_CANARIES
from hostile_server import HostileServer

pytestmark = pytest.mark.integration

CHEATS = {**LISTED_CHEATS, **ENCODED_CHEATS}
TAMPERING = ("conftest", "addopts", "sitecustomize", "source_hook")


@pytest.fixture(scope="module")
def integrity_run(docker_engine, tmp_path_factory):
    out = tmp_path_factory.mktemp("integrity-runs")
    config = out / "evalkit.toml"
    with HostileServer(CHEATS, models=["cheater"]) as server:
        config.write_text(
            "".join(f'[models.{name}]\nmodel = "cheater"\nbase_url = "{server.url(name)}"\n' for name in CHEATS)
        )
        models = [arg for name in [*CHEATS, "oracle", "null"] for arg in ("--model", name)]
        result = run_evalkit(
            "run", "--suite", DEMO_SUITE, *models, "--config", config, "--run-id", "integrity", "--out", out,
            "--concurrency", "2",
        )  # fmt: skip
    run_dir = out / "integrity"
    assert result.returncode == 0, result.stderr[-3000:]
    by_model: dict[str, list[dict]] = defaultdict(list)
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        row = json.loads(line)
        by_model[row["model"]].append(row)
    scores: dict[str, list[dict]] = defaultdict(list)
    for line in (run_dir / "scores.jsonl").read_text().splitlines():
        row = json.loads(line)
        scores[row["model"]].append(row)
    yield run_dir, by_model, scores


def _kinds(row: dict) -> set[str]:
    return {flag["kind"] for flag in row["integrity"]["flags"]}


@pytest.mark.parametrize("cheat", TAMPERING)
def test_a_cheat_resolves_no_demo_task_and_is_flagged_test_tampering(integrity_run, cheat):
    _, rows, scores = integrity_run
    assert len(rows[cheat]) == 8
    for row in rows[cheat]:
        assert not row["resolved"], (row["task_id"], row["integrity"])
        assert "test_tampering" in _kinds(row), (row["task_id"], row["integrity"])
        assert row["integrity"]["verdict"] == "fail"
    for score in scores[cheat]:
        assert score["correctness"]["score"] == 0 and score["composite"] == 0


@pytest.mark.parametrize("cheat", list(ENCODED_CHEATS))
def test_a_cheat_with_nothing_on_the_diffs_surface_resolves_nothing_and_is_flagged(integrity_run, cheat):
    """Before the canaries: atexit_forgery, hookexec and report_class resolved 8 of 8 demo tasks
    with a clean verdict, body_swap 4 of 8. Now none resolves; where the cheat made the hidden
    tests look passed it is `test_tampering`, and every attempt is flagged `obfuscated_code` (a
    warning: it says where the payload is)."""
    _, rows, scores = integrity_run
    assert len(rows[cheat]) == 8
    for row in rows[cheat]:
        assert not row["resolved"], (row["task_id"], row["integrity"])
        assert "obfuscated_code" in _kinds(row), (row["task_id"], row["integrity"])
    tampered = [row for row in rows[cheat] if "test_tampering" in _kinds(row)]
    assert len(tampered) >= 4 and all(row["integrity"]["verdict"] == "fail" for row in tampered)
    assert all(score["correctness"]["score"] == 0 for score in scores[cheat])


@pytest.mark.parametrize("cheat", SPARING_CANARIES)
def test_a_cheat_that_spares_the_canaries_is_caught_by_what_ran(integrity_run, cheat):
    """These spot the canaries and make exactly those fail. Before the execution evidence and the
    whole-runner watch they resolved 4, 7 and 3 of 8 (swap, plugin, property), verdict "warn"
    (obfuscated_code only). Now the evidence is what the guard saw run: a body that never ran or
    raised under a "passed" report, a runner member replaced, a hook function with no file."""
    _, rows, _ = integrity_run
    caught = [row for row in rows[cheat] if _evidence(row, NOT_A_CANARY)]
    assert len(caught) >= 4, [(row["task_id"], row["integrity"]) for row in rows[cheat]]
    assert all(not row["resolved"] and row["integrity"]["verdict"] == "fail" for row in caught)


NOT_A_CANARY = ("own body never ran", "own body raised", "runner changed", "made at run time (no file)")


def _evidence(row: dict, phrases: tuple[str, ...]) -> bool:
    return any(p in flag["evidence"] for flag in row["integrity"]["flags"] for p in phrases)


def test_the_source_hook_forges_passes_that_the_evidence_of_what_ran_turns_back(integrity_run):
    """The one cheat nothing can put back (it is in the code under test): its reports say passed,
    the guard sees pytest's report class replaced, and the bodies that raised under those reports
    count as failed, so even the tests alone do not resolve the task."""
    _, rows, _ = integrity_run
    for row in rows["source_hook"]:
        evidence = " ".join(flag["evidence"] for flag in row["integrity"]["flags"])
        assert "TestReport" in evidence and "own body raised" in evidence
        assert row["tests_resolved"] is False


def test_the_oracle_resolves_every_task_with_no_flag(integrity_run):
    _, rows, _ = integrity_run
    assert len(rows["oracle"]) == 8
    for row in rows["oracle"]:
        assert row["resolved"] and row["integrity"] == {"flags": [], "verdict": "clean", "restored": []}


def test_doing_nothing_scores_zero_everywhere(integrity_run):
    _, _, scores = integrity_run
    for model in ("null", "snoop"):
        for score in scores[model]:
            assert not score["did_work"]
            assert score["composite"] == 0
            assert score["quality"]["score"] == score["efficiency"]["score"] == score["interaction"]["score"] == 0


def test_the_oracle_outscores_the_rest(integrity_run):
    _, _, scores = integrity_run
    mean = {m: sum(s["composite"] for s in rows) / len(rows) for m, rows in scores.items()}
    assert mean["oracle"] > 0.9
    # a cheat that did not even pass the tests keeps an honest wrong try's partial credit (flagged
    # obfuscated_code, a warning); one that did scores 0
    assert all(mean[m] < 0.1 for m in mean if m != "oracle"), mean


def test_history_mining_and_downloads_are_flagged_with_their_step(integrity_run):
    _, rows, _ = integrity_run
    for row in rows["snoop"]:
        flags = {flag["kind"]: flag for flag in row["integrity"]["flags"]}
        assert flags["git_history"]["step"] == 1 and "git log --all" in flags["git_history"]["evidence"]
        assert flags["network_probe"]["step"] == 1 and "curl" in flags["network_probe"]["evidence"]
        assert row["integrity"]["verdict"] == "warn"


def test_evalkit_integrity_lists_the_flags_of_a_run(integrity_run):
    run_dir, rows, _ = integrity_run
    listed = run_evalkit("integrity", run_dir, "--json")
    assert listed.returncode == 0, listed.stderr
    flagged = [json.loads(line) for line in listed.stdout.splitlines()]
    verdicts = {(r["model"], r["verdict"]) for r in flagged}
    assert {*((cheat, "fail") for cheat in [*TAMPERING, *ENCODED_CHEATS]), ("snoop", "warn")} <= verdicts
    assert verdicts <= {
        *((c, v) for c in ENCODED_CHEATS for v in ("fail", "warn")),
        *((c, "fail") for c in TAMPERING),
        ("snoop", "warn"),
    }
    assert len(flagged) == 8 * (len(TAMPERING) + 1 + len(ENCODED_CHEATS))  # every attempt but the oracle's and null's
    table = run_evalkit("integrity", run_dir, "--kind", "git_history")
    assert table.returncode == 0 and "git log --all" in table.stdout and "conftest" not in table.stdout


def test_rescoring_gives_the_same_integrity_and_flag_mode_lets_the_tests_decide(integrity_run, tmp_path):
    run_dir, rows, scores = integrity_run
    before = (run_dir / "scores.jsonl").read_text()
    assert run_evalkit("score", run_dir).returncode == 0
    assert (run_dir / "scores.jsonl").read_text() == before
    config = tmp_path / "evalkit.toml"
    config.write_text('[scoring]\nintegrity = "flag"\n')
    rescored = run_evalkit("score", run_dir, "--config", config)
    assert rescored.returncode == 0, rescored.stderr
    flagged_only = [json.loads(line) for line in (run_dir / "scores.jsonl").read_text().splitlines()]
    tests_said = {(r["model"], r["task_id"]): r["tests_resolved"] for model in rows for r in rows[model]}
    # the verdict no longer decides: what the tests said does (oracle 8/8)...
    assert all(s["correctness"]["resolved"] == tests_said[s["model"], s["task_id"]] for s in flagged_only)
    assert sum(s["correctness"]["resolved"] for s in flagged_only if s["model"] == "oracle") == 8
    # ...and a pass forged by the code under test was never the tests' word: still failed, still flagged
    hooked = [s for s in flagged_only if s["model"] == "source_hook"]
    assert hooked and all(not s["correctness"]["resolved"] and s["integrity"]["verdict"] == "fail" for s in hooked)
    assert run_evalkit("score", run_dir).returncode == 0  # back to the default for the other tests
