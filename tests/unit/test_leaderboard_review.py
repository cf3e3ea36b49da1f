"""The leaderboard's quality and review sections, without a browser: each attempt's detail carries
the quality axis's parts with the lines each part blames (capped), and the reviewer's verdict
(answers, blamed lines, error, transcript events); the board carries each reviewer's calibration
figures, or the command that makes one. A failed review and an attempt without one still make a
page.

The run is real: attempts written and scored by `score_run` over a two-task copy of the toy suite
(no Docker); the reviews are then put in scores.jsonl and summary.json as a reviewed scoring
leaves them (`ReviewVerdict` rows, `reviewer_entries` with a calibration made by `summarise`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from leaderboard_fixtures import OK, two_task_suite, write_run
from toy import BASE_FILES, POWER, diff_of

from evalkit.calibration.reviewer_calibration import CalibrationReview, summarise
from evalkit.report.leaderboard.attempt_detail import LISTED
from evalkit.report.leaderboard.output import write_leaderboard
from evalkit.review.verdict import BlamedLine, ReviewVerdict, RubricAnswers
from evalkit.runs.paths import RunPaths
from evalkit.scoring.attempt_scores import AttemptScores
from evalkit.scoring.run_scores import reviewer_entries
from evalkit.trajectory import TrajectoryWriter

REVIEWER = "scripted-reviewer"
MARKERS = LISTED + 5  # TODO comments added: more than the view lists
TRANSCRIPT = "reviews/calc-power__sloppy__0.jsonl"
FAILED = "endpoint error: HTTP 500 after 3 retries"


def sloppy_patch(suite: Path) -> str:
    """The reference's power() with a debug print and MARKERS TODO comments added."""
    todos = "".join(f"    # TODO: case {i}\n" for i in range(MARKERS))
    power = POWER.replace("    result = 1\n", '    print("debug", a, b)\n' + todos + "    result = 1\n")
    return diff_of(suite / "repos" / "calc", {"calc/__init__.py": BASE_FILES["calc/__init__.py"] + power})


def write_transcript(run: Path) -> None:
    """A reviewer's transcript in the trajectories' format: it reads a file, then gives its verdict."""
    read = {"id": "r1", "type": "function", "function": {"name": "read", "arguments": '{"tree": "candidate"}'}}
    verdict = {"id": "v1", "type": "function", "function": {"name": "verdict", "arguments": '{"score": 3}'}}
    with TrajectoryWriter(run / TRANSCRIPT) as writer:
        writer.event("start", task="calc-power", reviewer=REVIEWER, mode="agentic")
        writer.message({"role": "system", "content": "You review code changes."})
        writer.message({"role": "user", "content": "Request:\nAdd integer power to calc."})
        writer.event("model_call", turn=1, latency_s=0.1, usage={"total_tokens": 700}, finish_reason="tool_calls")
        writer.message({"role": "assistant", "content": "Reading the candidate.", "tool_calls": [read]})
        writer.message({"role": "tool", "tool_call_id": "r1", "content": 'print("debug", a, b)'})
        writer.event("tool", call_id="r1", name="read", fault=None, exit_code=0)
        writer.message({"role": "assistant", "content": "", "tool_calls": [verdict]})
        writer.event("stop", stop_reason="verdict", error=None)


def verdicts() -> dict[tuple[str, str], ReviewVerdict]:
    """(task, model) -> the review: the sloppy attempt's with answers and a transcript, a failed one
    whose transcript is missing; the other attempts have none."""
    answers = RubricAnswers(
        does_what_asked=8,
        in_scope=9,
        readable=4,
        leftovers=["debug print in power()", "TODO comments"],
        would_merge=False,
        score=3,
        lines=[BlamedLine(path="calc/__init__.py", line=10, why="debug print")]
        + [BlamedLine(path="calc/__init__.py", line=11 + i, why="TODO left") for i in range(MARKERS)],
        summary="Works, but leaves a debug print and TODOs.",
    )
    common = {"reviewer": REVIEWER, "mode": "agentic", "rubric": "Review the candidate change."}
    return {
        ("calc-power", "sloppy"): ReviewVerdict(
            **common, score=0.3, answers=answers, summary=answers.summary, turns=2, tool_calls=1,
            prompt_tokens=1200, completion_tokens=80, cost_usd=0.0021, transcript=TRANSCRIPT,
        ),
        ("calc-power-again", "sloppy"): ReviewVerdict(
            **common, score=None, error=FAILED, turns=1, cost_usd=0.0,
            transcript="reviews/calc-power-again__sloppy__0.jsonl",
        ),
    }  # fmt: skip


def calibration() -> dict:
    """A calibration made by `summarise` from reviews of three tasks' references and two kinds."""
    scores = {"reference": (1.0, 1.0), "debug_print": (0.7, 0.8), "hack_markers": (1.0, 0.85)}  # reviewer, axis
    rows = [
        CalibrationReview(
            task_id=f"t{i}",
            change=change,
            verdict=ReviewVerdict(reviewer=REVIEWER, mode="agentic", score=mine - 0.1 * i * (change != "reference")),
            axis=axis,
        )
        for i in range(3)
        for change, (mine, axis) in scores.items()
    ]
    return summarise(rows, "toy", ["debug_print", "hack_markers"]).model_dump(mode="json")


def add_reviews(run: Path, extra_reviewers: list[dict]) -> None:
    """The reviews put in scores.jsonl and summary.json as a reviewed scoring writes them."""
    paths = RunPaths(run)
    rows = [AttemptScores.model_validate_json(line) for line in paths.scores.read_text().splitlines() if line]
    wanted = verdicts()
    rows = [row.model_copy(update={"review": wanted.get((row.task_id, row.model))}) for row in rows]
    paths.scores.write_text("".join(row.model_dump_json() + "\n" for row in rows))
    summary = json.loads(paths.summary.read_text())
    made = calibration()
    summary["reviewers"] = reviewer_entries(rows, lambda name, mode: made if name == REVIEWER else None)
    summary["reviewers"] += extra_reviewers
    paths.summary.write_text(json.dumps(summary))
    write_transcript(run)


@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("leaderboard-review")
    suite = two_task_suite(toy_suite_dir, root)
    sloppy = {"resolved": True, "patch": sloppy_patch(suite)}
    plan = {"sloppy": ("gpt-4o", [[sloppy], [OK]]), "plain": ("gpt-4o", [[OK], [OK]])}
    run = write_run(root / "runs", suite, "rv", plan)
    uncalibrated = {"reviewer": "local-qwen", "mode": "no-tools", "reviews": 0, "failed": 0, "cost_usd": None,
                    "calibration": None}  # fmt: skip
    unreadable = {**uncalibrated, "reviewer": "old-reviewer", "calibration": {"reviewer": "old-reviewer"}}
    add_reviews(run, [uncalibrated, unreadable])
    out = root / "report"
    page = write_leaderboard([run], out)
    details = {}
    for path in (out / "attempts").iterdir():
        detail = decode_attempt(path)
        details[(detail["task_id"], detail["model"])] = detail
    return {"run": run, "out": out, "page": page, "details": details, "suite": suite}


def decode_attempt(path: Path) -> dict:
    """attempts/<n>.js back to the detail: `window.__evalkitAttempt(n,JSON.parse("..."));`."""
    match = re.fullmatch(r"window\.__evalkitAttempt\((\d+),JSON\.parse\((\".*\")\)\);\n", path.read_text(), re.S)
    assert match, path.read_text()[:200]
    return json.loads(json.loads(match[2]))


def page_data(page: Path) -> dict:
    """The page's embedded data, as its script parses it."""
    html = page.read_text()
    return json.loads(re.search(r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.S)[1])


# -- the quality axis, part by part --------------------------------------------------------------
def test_each_quality_part_lists_the_lines_it_blames(report):
    quality = report["details"][("calc-power", "sloppy")]["quality"]
    parts = {p["part"]: p for p in quality["parts"]}
    assert quality["score"] < 1 and list(parts)[:3] == ["syntax", "lint", "markers"]  # the axis's order
    markers = parts["markers"]
    assert markers["charged"] == 0.45 and markers["score"] == 0.0  # at its cap
    assert len(markers["findings"]) == LISTED and markers["more"] == MARKERS - LISTED
    assert all(f["path"] == "calc/__init__.py" and f["line"] > 0 and f["what"] for f in markers["findings"])
    lines = [f["line"] for f in markers["findings"]]
    assert lines == sorted(lines) and lines[0] == 11  # after `def power` and the print
    (debug,) = parts["hygiene"]["findings"]
    assert debug["line"] == 10 and parts["hygiene"]["charged"] > 0
    assert parts["syntax"] == {**parts["syntax"], "charged": 0.0, "findings": [], "more": 0, "score": 1.0}


def test_the_findings_are_in_the_quality_section_not_twice(report):
    detail = report["details"][("calc-power", "sloppy")]
    assert "findings" not in detail["scores"]["quality"] and "review" not in detail["scores"]
    assert detail["scores"]["quality"]["parts"] == {p["part"]: p["score"] for p in detail["quality"]["parts"]}


def test_a_clean_change_charges_nothing(report):
    quality = report["details"][("calc-power", "plain")]["quality"]
    assert quality["score"] == 1.0 and all(not p["charged"] and not p["findings"] for p in quality["parts"])


# -- the review ----------------------------------------------------------------------------------
def test_the_review_carries_its_answers_lines_cost_and_transcript(report):
    review = report["details"][("calc-power", "sloppy")]["review"]
    assert (review["reviewer"], review["mode"], review["score"], review["error"]) == (REVIEWER, "agentic", 0.3, None)
    answers = review["answers"]
    rubric = ("does_what_asked", "in_scope", "readable", "score", "would_merge")
    assert [answers[k] for k in rubric] == [8, 9, 4, 3, False]
    assert answers["leftovers"] == ["debug print in power()", "TODO comments"]
    assert answers["lines"][0] == {"path": "calc/__init__.py", "line": 10, "why": "debug print"}
    assert len(answers["lines"]) == LISTED and review["lines_more"] == MARKERS + 1 - LISTED
    assert (review["turns"], review["tool_calls"], review["prompt_tokens"], review["cost_usd"]) == (2, 1, 1200, 0.0021)
    assert review["transcript"] == TRANSCRIPT and review["transcript_note"] is None
    events = review["transcript_view"]
    kinds = ["start", "message", "message", "model_call", "message", "message", "message", "stop"]
    assert [e["kind"] for e in events] == kinds
    assert events[4]["tool_calls"] == [{"id": "r1", "name": "read", "args": [["tree", "candidate"]]}]
    assert events[5]["tool"]["name"] == "read" and events[5]["content"] == 'print("debug", a, b)'
    assert events[-1]["stop_reason"] == "verdict"


def test_a_failed_review_keeps_its_error_and_says_its_transcript_is_missing(report):
    review = report["details"][("calc-power-again", "sloppy")]["review"]
    assert review["score"] is None and review["error"] == FAILED and review["answers"] is None
    assert review["transcript_view"] == [] and "is missing from the run folder" in review["transcript_note"]
    assert report["details"][("calc-power-again", "sloppy")]["scores"]["correctness"]["score"] == 1.0  # it stands


def test_an_attempt_without_a_review_has_none(report):
    assert all(report["details"][(task, "plain")]["review"] is None for task in ("calc-power", "calc-power-again"))


def test_a_transcript_outside_the_run_folder_is_not_read(report, tmp_path):
    from evalkit.report.leaderboard.attempt_detail import review_view

    (tmp_path / "secret.jsonl").write_text('{"type": "stop", "stop_reason": "x"}\n')
    run = tmp_path / "run"
    run.mkdir()
    view = review_view(ReviewVerdict(reviewer=REVIEWER, score=0.5, transcript="../secret.jsonl"), run)
    assert view["transcript_view"] == [] and "outside the run folder" in view["transcript_note"]


# -- the board's reviewers -----------------------------------------------------------------------
def test_the_board_carries_the_reviewers_calibration_figures(report):
    (suite,) = page_data(report["page"])["suites"]
    reviewers = {r["reviewer"]: r for r in suite["reviewers"]}
    entry = reviewers[REVIEWER]
    assert (entry["run_id"], entry["mode"], entry["reviews"], entry["failed"]) == ("rv", "agentic", 2, 1)
    assert entry["cost_usd"] == 0.0021 and entry["caught_gap"] == 0.15
    made = entry["calibration"]
    assert made == calibration() | {"made_at": made["made_at"]}  # every figure, as summary.json holds it
    kinds = {k["kind"]: k for k in made["kinds"]}
    assert kinds["debug_print"]["pairs"] == 3 and kinds["debug_print"]["caught"] == 1.0
    assert kinds["hack_markers"]["lower"] == pytest.approx(2 / 3) and kinds["hack_markers"]["auc"] is not None
    assert [k["kind"] for k in made["axis_kinds"]] == ["debug_print", "hack_markers"]
    assert made["reference_median"] == 1.0 and made["axis_reference_median"] == 1.0
    assert made["agreement_pairs"] == 6 and made["agreement"] is not None and made["spearman"] is not None
    assert made["suite"] == "toy"
    json_board = json.loads((report["out"] / "leaderboard.json").read_text())
    assert json_board["suites"][0]["reviewers"] == suite["reviewers"]  # the same in leaderboard.json


def test_a_reviewer_without_calibration_says_how_to_make_one(report):
    (suite,) = page_data(report["page"])["suites"]
    reviewers = {r["reviewer"]: r for r in suite["reviewers"]}
    plain = reviewers["local-qwen"]
    assert plain["calibration"] is None and plain["calibration_error"] is None
    assert plain["calibrate"] == (
        f"evalkit reviewer calibrate --reviewer local-qwen --suite {report['suite']} --reviewer-mode no-tools"
    )
    agentic = f"evalkit reviewer calibrate --reviewer {REVIEWER} --suite {report['suite']}"
    assert reviewers[REVIEWER]["calibrate"] == agentic  # agentic: the default mode, not spelled
    old = reviewers["old-reviewer"]  # a calibration this evalkit cannot read: left out, with why
    assert old["calibration"] is None and "Field required" in old["calibration_error"]


def test_a_run_without_reviewers_has_none_on_the_board(toy_suite_dir, tmp_path):
    suite = two_task_suite(toy_suite_dir, tmp_path)
    run = write_run(tmp_path / "runs", suite, "plain", {"gpt-4o": ("gpt-4o", [[OK], [OK]])})
    page = write_leaderboard([run], tmp_path / "out")
    assert page_data(page)["suites"][0]["reviewers"] == []


def test_the_page_script_draws_the_sections(report):
    """The sections are in the page's script, reading the fields the data gives them."""
    html = report["page"].read_text()
    for name in ("function qualityView(", "function reviewView(", "function reviewersView(", "reviewersView(suite)"):
        assert name in html, name
    for field in ("transcript_view", "lines_more", "calibration_error", "axis_kinds", "agreement_pairs", "spearman"):
        assert field in html, field
    assert "not calibrated" in html and "Recorded, not fatal" in html
