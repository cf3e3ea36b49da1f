"""Suite statistics, checked against independent counts (plain string handling of the diffs, the
standard library's statistics), and the shipped SWE-bench reference against a fresh computation."""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path

import pytest
from rich.console import Console

from evalkit.stats.reference import PROVENANCE, build_reference, shipped_reference
from evalkit.stats.stats_command import stats_command
from evalkit.stats.suite_stats import MEASURES, describe, row_figures, summarize, task_figures

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "swebench"
VERIFIED_CSV = FIXTURES / "swe_bench_verified_mini50.csv"
LITE_JSONL = FIXTURES / "swe_bench_lite_partial274.jsonl"


# -- independent measures: no unidiff, no numpy ----------------------------------------------
def hand_lines(diff: str) -> int:
    """Added + removed lines: '+'/'-' lines that are not the '+++ '/'--- ' file headers."""
    count = 0
    for line in diff.splitlines():
        if line.startswith(("+++ a/", "+++ b/", "+++ /dev/null", "--- a/", "--- b/", "--- /dev/null")):
            continue
        if line.startswith(("+", "-")):
            count += 1
    return count


def hand_files(*diffs: str) -> int:
    """Distinct paths named by `diff --git a/X b/Y` lines (Y: the file after the change)."""
    return len(
        {line.rsplit(" b/", 1)[1] for diff in diffs for line in diff.splitlines() if line.startswith("diff --git ")}
    )


def hand_summary(values: list[float]) -> dict:
    """median/q1/q3 by statistics.quantiles' inclusive method: the same linear interpolation."""
    q1, median, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return {"n": len(values), "median": median, "q1": q1, "q3": q3, "min": min(values), "max": max(values)}


def assert_matches(got: dict, values: list[float]) -> None:
    expected = hand_summary(values)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=0.005), key
    assert got["mean"] == pytest.approx(statistics.fmean(values), abs=0.005)


# -- describe ----------------------------------------------------------------------------------
def test_describe_uses_linear_interpolation():
    assert describe([4, 1, 3, 2]) == {"n": 4, "median": 2.5, "mean": 2.5, "q1": 1.75, "q3": 3.25, "min": 1, "max": 4}
    assert describe([7]) == {"n": 1, "median": 7, "mean": 7, "q1": 7, "q3": 7, "min": 7, "max": 7}
    assert describe([]) == {"n": 0, "median": None, "mean": None, "q1": None, "q3": None, "min": None, "max": None}
    assert describe([1, 2, 2])["mean"] == 1.67  # rounded to 2 decimals


# -- the demo suite ------------------------------------------------------------------------------
def test_demo_suite_figures_match_hand_counts(demo_suite):
    per_task = {f.id: f for f in map(task_figures, demo_suite.tasks)}
    for task in demo_suite.tasks:
        got = per_task[task.id]
        assert got.prompt_chars == len(task.prompt)
        assert got.lines_without_tests == hand_lines(task.patch)
        assert got.lines_with_tests == hand_lines(task.patch) + hand_lines(task.test_patch)
        assert got.files_without_tests == hand_files(task.patch)
        assert got.files_with_tests == hand_files(task.patch, task.test_patch)
        assert (got.fail_to_pass, got.pass_to_pass) == (len(task.tests.fail_to_pass), len(task.tests.pass_to_pass))

    summary = summarize(per_task.values())
    prompts = [len(t.prompt) for t in demo_suite.tasks]
    lines = [hand_lines(t.patch) for t in demo_suite.tasks]
    assert_matches(summary["prompt_chars"], prompts)
    assert_matches(summary["lines_without_tests"], lines)
    # Known facts of the demo suite (the README's "median prompt 363" is off by one: 361 and 367
    # are the middle values, so the median is 364).
    assert (summary["prompt_chars"]["min"], summary["prompt_chars"]["max"]) == (328, 376)
    assert summary["prompt_chars"]["median"] == 364
    assert summary["lines_without_tests"]["median"] == 154
    assert (summary["files_without_tests"]["min"], summary["files_without_tests"]["max"]) == (3, 6)


# -- the SWE-bench copies ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def verified_plain() -> list[dict[str, str]]:
    with VERIFIED_CSV.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def lite_plain() -> list[dict]:
    return [json.loads(line) for line in LITE_JSONL.read_text().splitlines() if line.strip()]


def test_verified_rows_match_hand_counts(verified_plain):
    summary = summarize(row_figures(row) for row in verified_plain)
    expected = {
        "prompt_chars": [len(r["problem_statement"]) for r in verified_plain],
        "lines_without_tests": [hand_lines(r["patch"]) for r in verified_plain],
        "lines_with_tests": [hand_lines(r["patch"]) + hand_lines(r["test_patch"]) for r in verified_plain],
        "files_without_tests": [hand_files(r["patch"]) for r in verified_plain],
        "files_with_tests": [hand_files(r["patch"], r["test_patch"]) for r in verified_plain],
        "fail_to_pass": [len(json.loads(r["FAIL_TO_PASS"])) for r in verified_plain],
        "pass_to_pass": [len(json.loads(r["PASS_TO_PASS"])) for r in verified_plain],
    }
    assert set(expected) == set(MEASURES)
    for measure, values in expected.items():
        assert_matches(summary[measure], values)


def test_lite_rows_have_prompt_and_patch_measures_only(lite_plain):
    per_row = [row_figures(row) for row in lite_plain]
    assert all(f.lines_with_tests is None and f.fail_to_pass is None and f.pass_to_pass is None for f in per_row)
    summary = summarize(per_row)
    assert_matches(summary["prompt_chars"], [len(r["problem_statement"]) for r in lite_plain])
    assert_matches(summary["lines_without_tests"], [hand_lines(r["patch"]) for r in lite_plain])
    assert_matches(summary["files_without_tests"], [hand_files(r["patch"]) for r in lite_plain])
    for measure in ("lines_with_tests", "files_with_tests", "fail_to_pass", "pass_to_pass"):
        assert summary[measure]["n"] == 0 and summary[measure]["median"] is None


# -- the shipped reference ----------------------------------------------------------------------
def test_shipped_reference_is_reproducible_from_the_fixtures():
    shipped = shipped_reference()
    computed_at = shipped["computed"]["swebench_lite_partial"]["computed_at"]
    assert build_reference(LITE_JSONL, VERIFIED_CSV, computed_at=computed_at) == shipped


def test_reference_provenance_is_the_readme_s():
    readme = (FIXTURES / "README.md").read_text()
    for name, known in PROVENANCE.items():
        repo_commit, path = known["source"].split(":", 1)
        repo, commit = repo_commit.split("@")
        row = next(line for line in readme.splitlines() if line.startswith(f"| {name} "))
        assert repo in row and commit in row and path in row, name


def test_published_figures_are_labelled_as_published():
    published = shipped_reference()["published"]
    assert published["label"] == "published (Cursor, Composer 2 report)"
    assert published["figures"]["lines_without_tests"]["CursorBench"] == {"median": 181}
    assert published["figures"]["lines_without_tests"]["SWE-bench Verified / Multilingual"] == {"median_range": [7, 10]}
    assert published["figures"]["prompt_chars"]["CursorBench"] == {"median_approx": 390}
    assert published["figures"]["prompt_chars"]["SWE-bench"] == {"range": [1200, 3000]}


# -- the stats command ------------------------------------------------------------------------
def run_stats(suite: Path, json_out: bool, reference: str | None = None) -> str:
    out = io.StringIO()
    assert stats_command(suite, json_out, reference, Console(file=out, width=250)) == 0
    return out.getvalue()


def test_stats_table_sets_the_suite_beside_swebench(demo_suite):
    text = run_stats(demo_suite.path, json_out=False)
    assert "median [q1–q3]" in text
    row = next(line for line in text.splitlines() if "prompt characters" in line)
    assert "364 [354–370.8]" in row and "1,135 [632.5–1,871.8]" in row and "CursorBench median ≈ 390" in row
    assert "partial copy: 274 of the 300" in text and "partial copy: 50 of the 500" in text
    assert "published (Cursor, Composer 2 report)" in text


def test_stats_json_and_swebench_files_as_suites(demo_suite, tmp_path):
    payload = json.loads(run_stats(demo_suite.path, json_out=True))
    assert payload["suite"]["tasks"] == 8 and payload["suite"]["figures"]["lines_without_tests"]["median"] == 154
    assert payload["reference"] == shipped_reference()

    lite = json.loads(run_stats(LITE_JSONL, json_out=True))  # rows that are not tasks still count
    assert lite["suite"]["tasks"] == 274 and lite["suite"]["figures"]["fail_to_pass"]["n"] == 0

    verified = json.loads(run_stats(VERIFIED_CSV, json_out=True, reference=str(VERIFIED_CSV)))
    given = verified["reference"]["computed"]["given"]
    assert (
        given["figures"]
        == verified["suite"]["figures"]
        == shipped_reference()["computed"]["swebench_verified_mini"]["figures"]
    )
