"""The HTML leaderboard in a real headless Chromium, opened from file:// as a user opens it: no
failed request and no console error, sorting, the attempt view loaded on click, the Pareto chart,
and a model's `<script>` / `<img onerror>` output shown as text and never run.

Needs Chromium (`apt-get install chromium`, /usr/bin/chromium or $EVALKIT_CHROMIUM) and the
`playwright` package; without them the tests are skipped locally with the reason and fail in CI.
The run folders are real: rows appended with RunStore, trajectories by TrajectoryWriter, scores by
evalkit's own `score_run` over a two-task copy of the toy suite (no Docker)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ROOT

from evalkit.agent.trajectory import TrajectoryWriter
from evalkit.report.html import write_leaderboard
from evalkit.runs.store import AttemptRecord, RunManifest, RunStore
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.run_scores import run_tasks, score_run

pytestmark = pytest.mark.integration

CHROMIUM = os.environ.get("EVALKIT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACT = ROOT / "reports" / "leaderboard-test.png"  # reports/ is git-ignored
EVIL = '</script><script>window.pwned=1</script><img src=x onerror="window.pwned=2">'
TASKS = ("calc-power", "calc-power-again")


def write_run(root: Path, suite: Path, run_id: str, plan: dict[str, tuple[str, list[list[dict]]]]) -> Path:
    """plan: model → (API model id, per task: per sample: {resolved, patch, final, output})."""
    store = RunStore(root / run_id)
    store.open()
    now = "2026-01-01T00:00:00+00:00"
    samples = max(len(kinds) for _, per_task in plan.values() for kinds in per_task)
    models = {m: {"name": m, "model": api} for m, (api, _) in plan.items()}
    store.write_manifest(
        RunManifest(
            run_id=run_id,
            suite="toy",
            suite_path=str(suite),
            tasks=list(TASKS),
            models=models,
            samples=samples,
            created_at=now,
            updated_at=now,
        )
    )
    tasks = run_tasks(store)
    for m, (model, (api, per_task)) in enumerate(plan.items()):
        for task_id, kinds in zip(TASKS, per_task, strict=False):
            task = tasks[task_id]
            for sample, kind in enumerate(kinds):
                resolved = kind.get("resolved", False)
                trajectory = f"trajectories/{task_id}__{m}__{sample}.jsonl"
                call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                with TrajectoryWriter(store.dir / trajectory) as writer:
                    writer.event("start", limits=task.limits.model_dump())
                    writer.message({"role": "user", "content": task.prompt})
                    writer.event(
                        "model_call", turn=1, latency_s=0.1, usage={"total_tokens": 500}, finish_reason="tool_calls"
                    )
                    writer.message({"role": "assistant", "content": "Looking around.", "tool_calls": [call]})
                    writer.message({"role": "tool", "tool_call_id": "c1", "content": kind.get("output", "calc tests")})
                    writer.event("tool", call_id="c1", name="bash", fault=None, exit_code=0)
                    writer.event("stop", stop_reason="submitted", error=None)
                f2p = task.tests.fail_to_pass
                store.append(
                    AttemptRecord(
                        run_id=run_id,
                        task_id=task_id,
                        model=model,
                        sample=sample,
                        resolved=resolved,
                        stop_reason="submitted",
                        endpoint={"model": api},
                        turns=1,
                        tool_calls=1,
                        agent_s=10.0,
                        usage={"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000},
                        final_message=kind.get("final", "Added power."),
                        model_patch=kind.get("patch", task.patch if resolved else ""),
                        patch_applied=True,
                        fail_to_pass={"passed": f2p if resolved else [], "failed": [] if resolved else f2p},
                        pass_to_pass={"passed": task.tests.pass_to_pass, "failed": []},
                        trajectory=trajectory,
                    )
                )
    score_run(store, tasks, ScoringSettings())
    return store.dir


@pytest.fixture(scope="module")
def report(toy_suite_dir, tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("leaderboard-browser")
    suite = root / "suite"
    shutil.copytree(toy_suite_dir, suite)
    shutil.copytree(suite / "calc-power", suite / "calc-power-again")
    ok = {"resolved": True}
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
            "gpt-4o": ("gpt-4o", [[ok, ok], [ok, {}]]),
            "gpt-4o-mini": ("gpt-4o-mini", [[ok, {}], [{}, {}]]),
            EVIL: ("no-price", [[evil, evil], [evil, evil]]),
        },
    )
    return write_leaderboard([run], root / "report", {"gpt-4o": {"swe-bench-verified": 0.33}})


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = "the playwright package is missing (pip install playwright)"
    else:
        problem = None if Path(CHROMIUM).is_file() else f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a headless Chromium: {problem}")
        pytest.skip(problem)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser, report):
    """The report opened from disk; at the end, no request may have failed and nothing may have
    been logged as an error (a blocked load, a CSP violation, an exception)."""
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    opened = context.new_page()
    problems: list[str] = []
    opened.on("requestfailed", lambda request: problems.append(f"request failed: {request.url} {request.failure}"))
    opened.on(
        "console",
        lambda message: (
            message.type in ("error", "warning") and problems.append(f"console {message.type}: {message.text}")
        ),
    )
    opened.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    opened.on(
        "dialog", lambda dialog: problems.append(f"a script opened a dialog: {dialog.message}") or dialog.dismiss()
    )
    opened.goto(report.as_uri())
    opened.wait_for_selector('body[data-ready="1"]')
    yield opened
    context.close()
    assert not problems, problems


def column(page, header: str) -> list[float]:
    """The values of a leaderboard column, in the row order shown."""
    headers = page.locator("table.board thead th").all_inner_texts()
    index = next(i for i, text in enumerate(headers) if text.strip().startswith(header))
    cells = page.locator(f"table.board tbody tr td:nth-child({index + 1})").all_inner_texts()
    return [float(cell.split()[0]) for cell in cells]


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


def test_clicking_a_header_sorts_the_column_both_ways(page):
    header = page.locator("table.board th", has_text="composite")
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "ascending"
    values = column(page, "composite")
    assert values == sorted(values) and len(set(values)) == 3
    header.locator("button").click()
    assert header.get_attribute("aria-sort") == "descending"
    assert column(page, "composite") == sorted(values, reverse=True)
    page.locator("table.board th", has_text="model").locator("button").click()
    names = page.locator("table.board tbody tr td:first-child .mono").all_inner_texts()
    assert names == sorted(names, key=lambda name: name.lower()) or names == sorted(names)


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
    page.wait_for_function("document.getElementById('attempt-title').textContent.endsWith('sample 1')")
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
