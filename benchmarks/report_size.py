"""How `evalkit report` scales: synthetic run folders (default 5 models × 250 tasks × 4 samples =
5,000 attempts, each with a small fake trajectory; no Docker), the leaderboard written from them,
and these figures printed:

- index.html size, the attempts/ folder, and the whole report;
- generation time of `write_leaderboard` (median of --repeats);
- page load time in headless Chromium from file:// until the page has drawn everything (median
  of --loads fresh pages), and the time to open one attempt (load its attempts/<n>.js, draw it).

The rows are written with evalkit's own models (AttemptRecord, AttemptScores, RunManifest) and the
summary with evalkit's own `summarize`, so the report reads them exactly as it reads real runs.

    python benchmarks/report_size.py [--models 5] [--tasks 250] [--samples 4] [--runs 1] [--out DIR]
        [--repeats 3] [--loads 5] [--chromium /usr/bin/chromium]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from evalkit.records import AttemptRecord
from evalkit.report.leaderboard.output import write_leaderboard
from evalkit.runs.store import RunManifest
from evalkit.scoring.attempt_scores import AttemptScores, CorrectnessAxis
from evalkit.scoring.efficiency import EfficiencyScore
from evalkit.scoring.interaction import InteractionPenalties, InteractionScore
from evalkit.scoring.quality import DEFAULT_WEIGHTS, QualityScore
from evalkit.scoring.run_scores import results_frame, summarize

WEIGHTS = {"correctness": 0.6, "quality": 0.15, "efficiency": 0.1, "interaction": 0.15}
PRICES = [0.0004, 0.002, 0.006, 0.015, None]  # USD per 1k tokens; None: a model without a price


def fake_patch(task: str, lines: int) -> str:
    body = "".join(f"+    value_{i} = compute({i})\n" for i in range(lines))
    return (
        f"diff --git a/pkg/{task}.py b/pkg/{task}.py\n--- a/pkg/{task}.py\n+++ b/pkg/{task}.py\n"
        f"@@ -1,3 +1,{lines + 2} @@\n def run():\n-    return None\n{body}     pass\n"
    )


def fake_trajectory(task: str, model: str, sample: int, patch: str, resolved: bool) -> list[dict]:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "bash", "arguments": json.dumps({"command": "pytest -q"})},
    }
    submit = {"id": "call_2", "type": "function", "function": {"name": "submit", "arguments": '{"summary": "done"}'}}
    return [
        {"type": "start", "t": 0.0, "task_id": task, "model": model, "sample": sample, "limits": {"max_turns": 50}},
        {"type": "message", "t": 0.1, "message": {"role": "system", "content": "You are a software engineer."}},
        {"type": "message", "t": 0.1, "message": {"role": "user", "content": f"Please implement {task}."}},
        {
            "type": "model_call",
            "t": 0.5,
            "turn": 1,
            "latency_s": 0.4,
            "usage": {"total_tokens": 900},
            "finish_reason": "tool_calls",
        },
        {
            "type": "message",
            "t": 0.5,
            "message": {"role": "assistant", "content": "Running the tests.", "tool_calls": [call]},
        },
        {
            "type": "message",
            "t": 1.2,
            "message": {"role": "tool", "tool_call_id": "call_1", "content": "3 passed\n" * 20},
        },
        {"type": "tool", "t": 1.2, "turn": 1, "call_id": "call_1", "name": "bash", "fault": None, "exit_code": 0},
        {
            "type": "model_call",
            "t": 1.6,
            "turn": 2,
            "latency_s": 0.4,
            "usage": {"total_tokens": 1400},
            "finish_reason": "tool_calls",
        },
        {"type": "message", "t": 1.6, "message": {"role": "assistant", "content": None, "tool_calls": [submit]}},
        {"type": "message", "t": 1.6, "message": {"role": "tool", "tool_call_id": "call_2", "content": "Submitted."}},
        {"type": "tool", "t": 1.6, "turn": 2, "call_id": "call_2", "name": "submit", "fault": None, "exit_code": None},
        {"type": "stop", "t": 1.6, "stop_reason": "submitted", "error": None},
        {"type": "diff", "t": 1.8, "patch": patch},
        {"type": "correctness", "t": 3.0, "result": {"resolved": resolved, "log": "===== 3 passed in 0.1s =====\n"}},
    ]


def attempt(run_id: str, task: str, model: str, sample: int, skill: float, price: float | None, rng: random.Random):
    resolved = rng.random() < skill
    error = "endpoint_error: HTTP 500" if rng.random() < 0.01 else None
    patch = fake_patch(task, rng.randint(3, 30))
    tokens = rng.randint(2_000, 60_000)
    f2p = [f"tests/test_{task}.py::test_{i}" for i in range(3)]
    p2p = [f"tests/test_{task}.py::test_keep_{i}" for i in range(6)]
    passed_f2p = f2p if resolved else f2p[:1]
    record = AttemptRecord(
        run_id=run_id,
        task_id=task,
        model=model,
        sample=sample,
        resolved=resolved,
        stop_reason="endpoint_error" if error else "submitted",
        error=error,
        usage={
            "prompt_tokens": tokens - 500,
            "completion_tokens": 500,
            "cached_tokens": 0,
            "total_tokens": tokens,
            "reported": True,
        },
        turns=2,
        tool_calls=2,
        duration_s=round(rng.uniform(5, 90), 3),
        agent_s=round(rng.uniform(3, 80), 3),
        final_message="Done: ran the tests.",
        model_patch=patch,
        patch_applied=True,
        fail_to_pass={"passed": passed_f2p, "failed": [t for t in f2p if t not in passed_f2p]},
        pass_to_pass={"passed": p2p, "failed": []},
        trajectory=f"trajectories/{task}__{model}__{sample}.jsonl",
    )
    quality = round(rng.uniform(0.5, 1.0), 4)
    efficiency = round(1 - tokens / 200_000, 4)
    interaction = round(rng.choice([1.0, 1.0, 0.95, 0.9]), 4)
    correctness = 1.0 if resolved else 0.0
    composite = round(
        sum(WEIGHTS[a] * v for a, v in zip(WEIGHTS, (correctness, quality, efficiency, interaction), strict=True)), 4
    )
    penalties = InteractionPenalties().model_dump()
    scores = AttemptScores(
        run_id=run_id,
        task_id=task,
        model=model,
        sample=sample,
        tags=["synthetic"],
        correctness=CorrectnessAxis(
            score=correctness, resolved=resolved, fail_to_pass=len(passed_f2p) / 3, pass_to_pass=1.0, patch_applied=True
        ),
        quality=QualityScore(
            score=quality,
            parts={k: quality for k in DEFAULT_WEIGHTS},
            weights=dict(DEFAULT_WEIGHTS),
            new_lint={},
            syntax_errors=[],
            debug_prints=0,
            breakpoints=0,
            commented_code=0,
            stray_files=[],
            whitespace_only_hunks=0,
            forbidden_edits=[],
            extra_files=[],
            missed_files=[],
            changed_lines=20,
            reference_lines=20,
            size_ratio=1.0,
        ),
        efficiency=EfficiencyScore(
            score=efficiency,
            prompt_tokens=tokens - 500,
            completion_tokens=500,
            cached_tokens=0,
            total_tokens=tokens,
            tokens_reported=True,
            cost_usd=None if price is None else round(tokens / 1000 * price, 6),
            turns=2,
            tool_calls=2,
            wall_s=record.agent_s,
            model_s=0.8,
            sandbox_s=0.7,
            budget_used={"tokens": tokens / 2_000_000, "turns": 0.04, "time": 0.01},
        ),
        interaction=InteractionScore(
            score=interaction,
            counts={k: 0 for k in penalties},
            penalties=penalties,
            final_message=record.final_message,
            endpoint_retries=0,
        ),
        composite=composite,
        weights=WEIGHTS,
    )
    return record, scores


def write_synthetic_runs(root: Path, models: int, tasks: int, samples: int, runs: int = 1, seed: int = 0) -> list[Path]:
    """Run folders as `evalkit run` + `evalkit score` leave them, with made-up attempts."""
    rng = random.Random(seed)
    names = [f"model-{chr(ord('a') + i)}" for i in range(models)]
    task_ids = [f"task-{i:04d}" for i in range(tasks)]
    folders = []
    for r in range(runs):
        run_id = f"synthetic-{r}"
        folder = root / run_id
        (folder / "trajectories").mkdir(parents=True)
        records, rows = [], []
        for m, model in enumerate(names):
            skill, price = 0.2 + 0.6 * m / max(1, models - 1), PRICES[m % len(PRICES)]
            for task in task_ids:
                for sample in range(samples):
                    record, score = attempt(run_id, task, model, sample, skill, price, rng)
                    records.append(record)
                    rows.append(score)
                    events = fake_trajectory(task, model, sample, record.model_patch, record.resolved)
                    (folder / record.trajectory).write_text("".join(json.dumps(e) + "\n" for e in events))
        now = "2026-01-01T00:00:00+00:00"
        manifest = RunManifest(
            run_id=run_id,
            suite="synthetic",
            suite_path=str(root / "no-such-suite"),
            tasks=task_ids,
            models={n: {"name": n, "model": n} for n in names},
            samples=samples,
            created_at=now,
            updated_at=now,
        )
        (folder / "run.json").write_text(manifest.model_dump_json(indent=2))
        (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
        (folder / "scores.jsonl").write_text("".join(s.model_dump_json() + "\n" for s in rows))
        summary = {
            "run_id": run_id,
            "scored_at": now,
            "weights": WEIGHTS,
            "models": summarize(results_frame(records, rows), "model"),
        }
        (folder / "summary.json").write_text(json.dumps(summary, indent=2))
        folders.append(folder)
    return folders


def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


FIRST_PAINT = """new Promise((resolve) => {
  const done = () => performance.getEntriesByName("first-contentful-paint")[0];
  if (done()) return resolve(done().startTime);
  new PerformanceObserver(() => done() && resolve(done().startTime)).observe({ type: "paint", buffered: true });
})"""
OPEN_ATTEMPT = """(index) => new Promise((resolve) => {
  const body = document.getElementById("attempt-body");
  const start = performance.now();
  const watch = new MutationObserver(() => {
    if (body.querySelector(".trajectory")) { watch.disconnect(); resolve(performance.now() - start); }
  });
  watch.observe(body, { childList: true, subtree: true });
  const cells = document.querySelectorAll("button.cell");
  cells[index % cells.length].click();
})"""


def browser_times(page_path: Path, loads: int, chromium: str) -> dict[str, list[float]]:
    """Milliseconds, per fresh page: navigation to drawn as the driver sees it (wall); navigation
    start to the page's `evalkit-drawn` mark (in page) and to its first contentful paint; a click
    on a matrix cell to that attempt's trajectory drawn (attempts/<n>.js loaded by a <script src>)."""
    from playwright.sync_api import sync_playwright

    url = page_path.resolve().as_uri()
    times: dict[str, list[float]] = {"wall": [], "drawn": [], "paint": [], "attempt": []}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        for load in range(loads):
            page = browser.new_page()
            start = time.perf_counter()
            page.goto(url)
            page.wait_for_selector('body[data-ready="1"]')
            times["wall"].append((time.perf_counter() - start) * 1000)
            times["drawn"].append(page.evaluate("performance.getEntriesByName('evalkit-drawn')[0].startTime"))
            times["paint"].append(page.evaluate(FIRST_PAINT))
            times["attempt"].append(page.evaluate(OPEN_ATTEMPT, 997 * (load + 1)))
            page.close()
        browser.close()
    return times


def spread(values: list[float], unit: str = "ms", spec: str = ".0f") -> str:
    """`median X unit of N (each, value, ...)`."""
    each = ", ".join(format(v, spec) for v in values)
    return f"median {format(statistics.median(values), spec)} {unit} of {len(values)} ({each})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=250)
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--loads", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--out", type=Path, help="keep the runs and the report here (default: a temporary folder)")
    args = parser.parse_args()

    root = args.out or Path(tempfile.mkdtemp(prefix="evalkit-report-bench-"))
    try:
        start = time.perf_counter()
        runs = write_synthetic_runs(root / "runs", args.models, args.tasks, args.samples, args.runs)
        made = time.perf_counter() - start
        attempts = args.models * args.tasks * args.samples * args.runs
        print(
            f"synthetic runs: {len(runs)} run(s), {args.models} models × {args.tasks} tasks × {args.samples} samples"
            f" = {attempts:,} attempts ({folder_size(root / 'runs') / 1e6:.1f} MB, written in {made:.1f} s)"
        )
        generation = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            page = write_leaderboard(runs, root / "leaderboard", {"model-e": {"swe-bench-verified": 0.5}})
            generation.append(time.perf_counter() - start)
        report = root / "leaderboard"
        print(f"index.html: {page.stat().st_size / 1e3:,.0f} kB")
        median_file = statistics.median(f.stat().st_size for f in (report / "attempts").iterdir())
        print(
            f"attempts/: {folder_size(report / 'attempts') / 1e6:.1f} MB in {attempts:,} files "
            f"(median {median_file / 1e3:.1f} kB)"
        )
        print(f"whole report: {folder_size(report) / 1e6:.1f} MB")
        print(f"generation (write_leaderboard): {spread(generation, 's', '.2f')}")
        if not Path(args.chromium).exists():
            print(f"page load: skipped ({args.chromium} not found; apt-get install chromium)")
            return 0
        times = browser_times(page, args.loads, args.chromium)
        print(f"page load in headless Chromium from file://, navigation start → drawn: {spread(times['drawn'])}")
        print(f"first contentful paint (navigation start → tables painted): {spread(times['paint'])}")
        print(f"page load as the driver sees it (goto → body[data-ready]): {spread(times['wall'])}")
        print(f"open one attempt (click → attempts/<n>.js loaded → trajectory drawn): {spread(times['attempt'])}")
    finally:
        if args.out is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
