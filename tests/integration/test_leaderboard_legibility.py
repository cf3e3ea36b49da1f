"""A crowded leaderboard in a real headless Chromium, at a desktop and a phone width: local models
that cost nothing (the chart shows completion tokens instead of an empty cost grid), several
models on nearly the same point (their labels must not overlap), and endpoints that failed (their
rows carry an error count, not an ordinary 0 %). Screenshots of both widths are written to
reports/leaderboard-shots/ (git-ignored) for a person to look at."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from conftest import ROOT
from leaderboard_fixtures import DOWN, OK, chromium, opened, two_task_suite, write_run

from evalkit.report.leaderboard.output import write_leaderboard

pytestmark = pytest.mark.integration

SHOTS = ROOT / "reports" / "leaderboard-shots"
WIDTHS = (1400, 390)


def attempts(pattern: str, completion: int) -> list[list[dict]]:
    """Two tasks × two samples from four letters: r resolved, f failed, e endpoint error."""
    kind = {"r": OK, "f": {}, "e": DOWN}
    cells = [{**kind[c], "completion": completion} if c != "e" else DOWN for c in pattern]
    return [cells[:2], cells[2:]]


@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("leaderboard-legibility")
    suite = two_task_suite(toy_suite_dir, root)
    plan = {  # API id `null`: evalkit's built-in model, priced at $0, so every cost is $0
        "qwen2.5-coder-7b-instruct": ("null", attempts("rrrf", 1200)),
        "qwen2.5-coder-7b-instruct-q4_k_m": ("null", attempts("rrrf", 1210)),
        "qwen2.5-coder-7b-instruct-q8_0": ("null", attempts("rrrf", 1190)),
        "starcoder2-7b": ("null", attempts("rrrf", 1200)),
        "deepseek-coder-6.7b-instruct": ("null", attempts("rfrf", 1200)),
        "llama-3.1-8b-instruct": ("null", attempts("rfrf", 1230)),
        "codegemma-7b-it": ("null", attempts("ffff", 900)),
        "flaky-endpoint": ("null", attempts("eree", 1100)),
        "dead-endpoint": ("null", attempts("eeee", 0)),
    }
    run = write_run(root / "runs", suite, "local", plan)
    return write_leaderboard([run], root / "report")


@pytest.fixture(scope="module")
def browser():
    with chromium() as launched:
        yield launched


def boxes(page, selector: str) -> list[dict]:
    return page.locator(selector).evaluate_all(
        "nodes => nodes.map(n => { const b = n.getBoundingClientRect();"
        " return {title: n.querySelector('title').textContent, x: b.x, y: b.y, w: b.width, h: b.height}; })"
    )


def overlap(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"] and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_point_labels_never_overlap_each_other_or_the_points(browser, report, width):
    with opened(browser, report, width=width) as page:
        labels = boxes(page, "svg.cost-chart text.label")
        points = boxes(page, "svg.cost-chart circle.point")
        assert len(points) == 8  # every model but the one whose every attempt failed at the endpoint
        for a, b in itertools.combinations(labels, 2):
            assert not overlap(a, b), (width, a, b)
        for label, point in itertools.product(labels, points):
            assert not overlap(label, point), (width, label, point)
        caption = page.locator("svg.cost-chart + figcaption").inner_text()
        named = {label["title"] for label in labels}  # the whole name is the label's tooltip
        unlabelled = [name for name in (p["title"].split(":")[0] for p in points) if name not in named]
        if width >= 1400:
            assert not unlabelled  # room for every name at a desktop width
        for name in unlabelled:
            assert name in caption  # named under the chart instead; its point's tooltip says the rest
        page.screenshot(path=str(SHOTS.joinpath(f"chart-{width}.png")), clip=chart_clip(page), full_page=True)


def chart_clip(page) -> dict:
    SHOTS.mkdir(parents=True, exist_ok=True)
    box = page.locator("figure.chart").first.bounding_box()
    scroll = page.evaluate("[window.scrollX, window.scrollY]")
    return {"x": box["x"] + scroll[0], "y": box["y"] + scroll[1], "width": box["width"], "height": box["height"]}


def test_nothing_costs_anything_so_the_chart_shows_completion_tokens(browser, report):
    data = json.loads((report.parent / "leaderboard.json").read_text())
    (suite,) = data["suites"]
    assert suite["chart_x"] == "tokens"
    with opened(browser, report, width=1400) as page:
        chart = page.locator("svg.cost-chart")
        ticks = chart.locator("text.tick").all_text_contents()
        assert not any(t.startswith("$") for t in ticks)
        assert "1.2K" in ticks or "1K" in ticks  # the scale reaches the models' ~1,200 tokens
        assert chart.locator("text.axis-title", has_text="median completion tokens per attempt").count() == 1
        assert page.locator("h3", has_text="Completion tokens against resolved rate").count() == 1
        frontier = chart.locator("polyline.frontier").get_attribute("points").split()
        assert len(frontier) == len(suite["frontier"]) >= 2  # the fewest tokens per resolved rate


def test_a_failed_endpoint_row_shows_its_errors_not_a_zero(browser, report):
    with opened(browser, report, width=1400) as page:
        dead = page.locator("table.board tbody tr", has_text="dead-endpoint")
        assert dead.locator(".badge.error-count").inner_text() == "4 errors"
        assert "0.0 %" not in dead.inner_text() and dead.locator(".no-result").inner_text() == "no result"
        flaky = page.locator("table.board tbody tr", has_text="flaky-endpoint")
        assert flaky.locator(".badge.error-count").inner_text() == "3 errors"
        assert "endpoint error × 3" in flaky.locator(".badge.error-count").get_attribute("title")
        assert page.locator("table.board .badge.error-count").count() == 2  # nobody else's
        page.locator("table.board th", has_text="resolved %").locator("button").click()  # worst first
        assert "dead-endpoint" in page.locator("table.board tbody tr").last.inner_text()  # no result: last either way
        bars = page.locator("svg.axis-chart").first
        assert bars.locator("text.value.error").all_text_contents() == ["all attempts errors"]


@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots_at_desktop_and_phone_width(browser, report, width):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with opened(browser, report, width=width) as page:
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0  # wide tables scroll inside their own box; the page itself never scrolls sideways
        page.screenshot(path=str(SHOTS / f"page-{width}.png"), full_page=True)
        page.locator("table.matrix tbody tr").first.locator("button.cell").first.click()
        page.locator("dialog#attempt .trajectory").wait_for()
        page.screenshot(path=str(SHOTS / f"attempt-{width}.png"))
    assert (SHOTS / f"page-{width}.png").stat().st_size > 10_000
