"""The HTML leaderboard in a real headless Chromium, opened from file:// as a user opens it: no
failed request and no console error, sorting, the attempt view loaded on click, the Pareto chart,
the per-axis bars, and a model's `<script>` / `<img onerror>` output shown as text and never run.
(The legibility of a crowded all-local page, and the screenshots: test_leaderboard_legibility.py.)"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import ROOT
from leaderboard_fixtures import OK, chromium, opened, two_task_suite, write_run

from evalkit.report.leaderboard.output import write_leaderboard

pytestmark = pytest.mark.integration

ARTIFACT = ROOT / "reports" / "leaderboard-test.png"  # reports/ is git-ignored
APPROXIMATE = {"environment": "approximate: Python 3.6 wanted, 3.9 used (bullseye)"}
EVIL = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'


@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("leaderboard-browser")
    suite = two_task_suite(toy_suite_dir, root)
    evil = {
        "patch": f"diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+{EVIL}\n",
        "final": EVIL,
        "output": EVIL,
    }
    run = write_run(
        root / "runs",
        suite,
        "browser",
        {
            "gpt-4o": ("gpt-4o", [[OK, OK], [OK, {}]]),
            "gpt-4o-mini": ("gpt-4o-mini", [[OK, {}], [{**APPROXIMATE}, {**APPROXIMATE}]]),
            EVIL: ("no-price", [[evil, evil], [evil, evil]]),
        },
    )
    return write_leaderboard([run], root / "report", {"gpt-4o": {"swe-bench-verified": 0.33}})


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


@pytest.fixture
def page(browser, report):
    with opened(browser, report) as page:
        yield page


def cells(page, header: str) -> list[str]:
    """The texts of a leaderboard column, in the row order shown."""
    headers = page.locator("table.board thead th").all_inner_texts()
    index = next(i for i, text in enumerate(headers) if text.strip().startswith(header))
    return page.locator(f"table.board tbody tr td:nth-child({index + 1})").all_inner_texts()


def column(page, header: str) -> list[float]:
    return [float(cell.split()[0]) for cell in cells(page, header)]


def svg_texts(locator) -> list[str]:
    """What SVG <text> elements show (their own text, not their <title> tooltip)."""
    return locator.evaluate_all("nodes => nodes.map(n => n.firstChild.textContent)")


def test_loads_from_disk_with_every_part(page, report, tmp_path):
    assert page.url.startswith("file://")
    assert page.locator("table.board tbody tr").count() == 3
    assert page.locator("table.matrix tbody tr").count() == 2
    assert page.locator("text=SWE-bench Lite (partial copy)").count() >= 1  # the suite beside SWE-bench
    assert page.locator("table.board th", has_text="SWE-bench Verified (published)").count() == 1
    page.screenshot(path=str(tmp_path / "leaderboard.png"), full_page=True)
    ARTIFACT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACT), full_page=True)
    assert ARTIFACT.stat().st_size > 10_000


def test_a_first_click_sorts_best_first_and_a_second_reverses(page):
    composite = page.locator("table.board th", has_text="composite")
    composite.locator("button").click()
    assert composite.get_attribute("aria-sort") == "descending"  # the best composite on top
    values = column(page, "composite")
    assert values == sorted(values, reverse=True) and len(set(values)) == 3
    assert "Sorted by composite, best first" in page.locator(".sort-state").inner_text()
    composite.locator("button").click()
    assert composite.get_attribute("aria-sort") == "ascending"
    assert column(page, "composite") == sorted(values)
    assert "worst first" in page.locator(".sort-state").inner_text()
    cost = page.locator("table.board th", has_text="cost / task")
    cost.locator("button").click()  # for a cost, best is cheapest
    assert cost.get_attribute("aria-sort") == "ascending" and composite.get_attribute("aria-sort") is None
    costs = cells(page, "cost / task")
    assert costs[-1] == "unknown"  # no price: last either way
    assert [float(c.strip("$")) for c in costs[:2]] == sorted(float(c.strip("$")) for c in costs[:2])
    page.locator("table.board th", has_text="model").locator("button").click()
    names = page.locator("table.board tbody tr td:first-child .mono").all_inner_texts()
    assert names == sorted(names)


def test_a_matrix_cell_opens_the_attempt_with_its_trajectory(page):
    cell = page.locator("table.matrix tbody tr", has_text="calc-power-again").locator("button.cell").first
    assert cell.inner_text() == "1/2"  # gpt-4o, best first: one of two samples resolved
    cell.click()
    dialog = page.locator("dialog#attempt")
    dialog.locator(".trajectory").wait_for()
    assert dialog.is_visible()
    assert "calc-power-again · gpt-4o · sample 0" in page.locator("#attempt-title").inner_text()
    assert dialog.locator("pre.prompt").inner_text() == "Add integer power to calc."
    assert dialog.locator(".trajectory", has_text="tool call: bash").count() == 1
    assert dialog.locator(".trajectory pre.args").first.inner_text() == "ls"
    assert dialog.locator(".trajectory", has_text="tool output: bash").count() == 1
    assert dialog.locator("pre.diff span.add", has_text="def power(a, b):").count() == 1
    assert dialog.locator("pre.diff span.hunk").count() >= 1
    assert dialog.locator("table.scores", has_text="lint").count() == 1
    assert dialog.locator("details summary", has_text="FAIL_TO_PASS passed: 2").count() == 1
    dialog.locator(".samples button", has_text="#1").click()  # the other sample, from the view
    from playwright.sync_api import expect  # (imported here: the fixture skips when playwright is missing)

    # a locator wait, not wait_for_function: the page's CSP forbids evaluating a string in it
    expect(page.locator("#attempt-title")).to_have_text(re.compile(r"sample 1$"))
    page.locator("#attempt-close").click()
    assert not dialog.is_visible()


def test_html_from_a_model_stays_inert_text(page):
    assert page.evaluate("typeof window.pwned") == "undefined"
    assert page.locator("table.board tbody", has_text=EVIL).count() == 1  # the model name, as text
    row = page.locator("table.matrix tbody tr", has_text="calc-power").first
    titles = page.locator("table.matrix thead th").evaluate_all("cells => cells.map(c => c.title)")
    evil_column = titles.index(EVIL)  # the header shows it shortened, its tooltip whole
    row.locator(f"td:nth-child({evil_column + 1}) button").click()
    dialog = page.locator("dialog#attempt")
    dialog.locator(".trajectory").wait_for()
    assert dialog.locator("pre.final").inner_text() == EVIL
    assert dialog.locator(".trajectory pre", has_text="window.pwned=2").count() == 1  # the tool output
    assert dialog.locator("pre.diff span.add", has_text="onerror").count() == 1
    assert page.evaluate("document.querySelectorAll('img').length") == 0
    assert page.evaluate("document.querySelectorAll('script').length") == 2  # the data block and the page script
    assert page.evaluate("typeof window.pwned") == "undefined"


def test_an_attempt_opens_from_its_link(page, report):
    page.goto(report.as_uri() + "#attempt-1")
    page.locator("dialog#attempt .trajectory").wait_for()
    assert "sample 1" in page.locator("#attempt-title").inner_text()


def test_cost_chart_marks_the_pareto_frontier(page, report):
    chart = page.locator("svg.cost-chart")
    assert chart.is_visible()
    data = json.loads((report.parent / "leaderboard.json").read_text())
    frontier = data["suites"][0]["frontier"]
    assert frontier  # the priced models not beaten on both cost and resolved rate
    points = chart.locator("polyline.frontier").get_attribute("points").split()
    assert len(points) == len(frontier)
    assert chart.locator("circle.point.on").count() == len(frontier)
    assert chart.locator("circle.point.unknown").count() == 1  # the unpriced model, in its own strip
    assert chart.locator("text", has_text="cost unknown").count() == 1
    assert page.locator("svg.axis-chart").count() >= 5  # resolved and the four axes


def test_each_axis_bar_shows_its_value_on_a_scale(page, report):
    data = json.loads((report.parent / "leaderboard.json").read_text())
    rows = data["suites"][0]["models"]
    charts = page.locator("svg.axis-chart")
    resolved = charts.first
    assert svg_texts(resolved.locator("text.tick")) == ["0 %", "50 %", "100 %"]
    expected = [f"{round(row['resolved_rate']['mean'] * 100)} %" for row in rows]
    assert svg_texts(resolved.locator("text.value")) == expected
    composite = page.locator("svg.axis-chart", has=page.locator("text", has_text="composite"))
    assert svg_texts(composite.locator("text.tick")) == ["0", "0.5", "1"]
    shown = [float(v) for v in svg_texts(composite.locator("text.value"))]
    assert shown == [round(row["axes"]["composite"]["mean"], 2) for row in rows]


@pytest.fixture(scope="module")
def diff_only_report(toy_suite_dir, tmp_path_factory) -> Path:
    """A run of two models: one by the tool loop, one by an agent that leaves only its diff."""
    root = tmp_path_factory.mktemp("leaderboard-n-a")
    suite = two_task_suite(toy_suite_dir, root)
    diff_only = {"resolved": True, "evidence": ["diff"]}
    plan = {"loop": ("gpt-4o", [[OK], [OK]]), "command": ("gpt-4o", [[diff_only], [diff_only]])}
    return write_leaderboard([write_run(root / "runs", suite, "n-a", plan)], root / "report", {})


def test_an_axis_an_agent_has_no_evidence_for_shows_n_a_never_0(browser, diff_only_report):
    with opened(browser, diff_only_report) as page:
        models = cells(page, "model")
        row = next(i for i, name in enumerate(models) if name.strip().startswith("command"))
        other = 1 - row
        for axis in ("efficiency", "interaction"):
            shown = cells(page, axis)
            assert shown[row] == "n/a" and float(shown[other]) > 0
            chart = page.locator("svg.axis-chart", has=page.locator("text", has_text=axis))
            assert svg_texts(chart.locator("text.value"))[row] == "n/a"
        page.locator("table.matrix tbody tr").first.locator("button.cell").nth(row).click()
        dialog = page.locator("dialog#attempt")
        dialog.locator(".trajectory").wait_for()
        scores = dialog.locator("table.scores tbody tr").all_inner_texts()
        by_axis = {line.split("\t")[0]: line.split("\t")[1] for line in scores}
        assert by_axis["efficiency"] == by_axis["interaction"] == "n/a"
        assert "n/a: efficiency, interaction" in dialog.inner_text()


def test_the_attempt_view_speaks_words_not_keys(page):
    page.locator("table.matrix tbody tr").first.locator("button.cell").first.click()
    dialog = page.locator("dialog#attempt")
    dialog.locator(".trajectory").wait_for()
    scores = dialog.locator("table.scores").inner_text()
    for words in ("hidden tests passed", "FAIL_TO_PASS passed", "patch applied", "token budget used", "lines changed"):
        assert words in scores, words
    for key in ("tests_resolved", "f2p_passed", "budget_tokens", "changed_lines", "true", "false"):
        assert key not in scores, key
    facts = dialog.locator("p.facts").inner_text()
    assert facts.startswith("1 turn · 1 tool call · 10,000 tokens · 1 min 15 s in all")  # duration_s 75
    start = dialog.locator(".trajectory .event.meta").first.inner_text()
    assert "2026-01-01T" not in start and "2026" in start  # a local date, not the ISO text
    assert "limits: 50 turns" in start and "{" not in start
    assert page.locator("#runs td time").first.get_attribute("datetime") == "2026-01-01T00:00:00+00:00"


def test_a_model_that_ran_on_an_approximate_environment_says_so_on_its_row(page):
    """A SWE-bench task whose Python had no offline base ran on the nearest: the row says it,
    and which tasks, rather than presenting the figures as SWE-bench's own."""
    rows = page.locator("table.board tbody tr")
    badges = [rows.nth(i).locator(".approx-env") for i in range(rows.count())]
    shown = [b.inner_text() for b in badges if b.count()]
    assert shown == ["1 task on an approximate environment"]
    title = page.locator(".approx-env").get_attribute("title")
    assert "Python 3.6 wanted, 3.9 used (bullseye)" in title
