"""Real run folders and a real headless Chromium for the leaderboard's browser tests.

The run folders are real: rows appended with RunStore, trajectories by TrajectoryWriter, scores by
evalkit's own `score_run` over a two-task copy of the toy suite (no Docker). Chromium is Debian's
(`bash scripts/ensure-browser.sh`, or $EVALKIT_CHROMIUM), driven by the `playwright` package;
without them the tests are skipped locally with the reason and fail in CI."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from evalkit.records import AttemptRecord
from evalkit.runs.store import RunManifest, RunStore
from evalkit.scoring.attempt_scores import ScoringSettings
from evalkit.scoring.run_scores import run_tasks, score_run
from evalkit.trajectory import TrajectoryWriter

CHROMIUM = os.environ.get("EVALKIT_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
TASKS = ("calc-power", "calc-power-again")
OK = {"resolved": True}
DOWN = {
    "stop": "endpoint_error",
    "error": "Connection refused after 6 retries",
    "prompt": 0,
    "completion": 0,
    "final": None,
}


def two_task_suite(toy_suite_dir: Path, root: Path) -> Path:
    suite = root / "suite"
    shutil.copytree(toy_suite_dir, suite)
    shutil.copytree(suite / "calc-power", suite / "calc-power-again")
    return suite


def write_run(
    root: Path,
    suite: Path,
    run_id: str,
    plan: dict[str, tuple[str, list[list[dict]]]],
    task_ids: Sequence[str] = TASKS,
    cutoffs: Mapping[str, str] | None = None,
) -> Path:
    """plan: model → (API model id, which sets the price; per task of `task_ids`: per sample: {resolved,
    patch, final, output, stop, error, prompt and completion (tokens), agent (absent: the tool loop),
    evidence (the agent's; absent: all), record (any other AttemptRecord fields, e.g. the simulated
    user's)}); `cutoffs`: model → its knowledge cutoff, recorded in run.json; scored as `evalkit score` does."""
    store = RunStore(root / run_id)
    store.open()
    now = "2026-01-01T00:00:00+00:00"
    samples = max(len(kinds) for _, per_task in plan.values() for kinds in per_task)
    models = {m: {"name": m, "model": api} for m, (api, _) in plan.items()}
    for model, cutoff in (cutoffs or {}).items():
        models[model]["knowledge_cutoff"] = cutoff
    store.write_manifest(
        RunManifest(
            run_id=run_id,
            suite="toy",
            suite_path=str(suite),
            tasks=list(task_ids),
            models=models,
            samples=samples,
            created_at=now,
            updated_at=now,
        )
    )
    tasks = run_tasks(store)
    for m, (model, (api, per_task)) in enumerate(plan.items()):
        for task_id, kinds in zip(task_ids, per_task, strict=False):
            task = tasks[task_id]
            for sample, kind in enumerate(kinds):
                resolved = kind.get("resolved", False)
                stop = kind.get("stop", "submitted")
                prompt, completion = kind.get("prompt", 9000), kind.get("completion", 1000)
                trajectory = f"trajectories/{task_id}__{m}__{sample}.jsonl"
                call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}
                with TrajectoryWriter(store.dir / trajectory) as writer:
                    writer.event("start", limits=task.limits.model_dump(), started_at=now)
                    writer.message({"role": "user", "content": task.prompt})
                    writer.event(
                        "model_call", turn=1, latency_s=0.1, usage={"total_tokens": 500}, finish_reason="tool_calls"
                    )
                    writer.message({"role": "assistant", "content": "Looking around.", "tool_calls": [call]})
                    writer.message({"role": "tool", "tool_call_id": "c1", "content": kind.get("output", "calc tests")})
                    writer.event("tool", call_id="c1", name="bash", fault=None, exit_code=0)
                    for exchange in kind.get("exchanges", []):  # questions to the simulated user
                        writer.event("user", turn=1, **exchange)
                    writer.event("stop", stop_reason=stop, error=kind.get("error"))
                f2p = task.tests.fail_to_pass
                store.append(
                    AttemptRecord(
                        run_id=run_id,
                        task_id=task_id,
                        model=model,
                        sample=sample,
                        agent=kind.get("agent", "tool-loop"),
                        resolved=resolved,
                        stop_reason=stop,
                        error=kind.get("error"),
                        evidence=kind.get("evidence"),
                        environment=kind.get("environment"),
                        endpoint={"model": api},
                        turns=1,
                        tool_calls=1,
                        agent_s=10.0,
                        duration_s=75.0,
                        usage={
                            "prompt_tokens": prompt,
                            "completion_tokens": completion,
                            "total_tokens": prompt + completion,
                        },
                        final_message=kind.get("final", "Added power."),
                        model_patch=kind.get("patch", task.patch if resolved else ""),
                        patch_applied=True,
                        fail_to_pass={"passed": f2p if resolved else [], "failed": [] if resolved else f2p},
                        pass_to_pass={"passed": task.tests.pass_to_pass, "failed": []},
                        trajectory=trajectory,
                        **kind.get("record", {}),
                    )
                )
    score_run(store, tasks, ScoringSettings())
    return store.dir


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """A launched headless Chromium; skipped (failed under CI) when there is none."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        problem = "the playwright package is missing (pip install playwright)"
    else:
        problem = None if Path(CHROMIUM).is_file() else f"no Chromium at {CHROMIUM} (bash scripts/ensure-browser.sh)"
    if problem:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a headless Chromium: {problem}")
        pytest.skip(problem)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


@contextlib.contextmanager
def opened(browser, page_path: Path, width: int = 1300, height: int = 900) -> Iterator[object]:
    """The report opened from disk at a window width; at the end, no request may have failed and
    nothing may have been logged as an error (a blocked load, a CSP violation, an exception)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    problems: list[str] = []
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url} {request.failure}"))
    page.on(
        "console",
        lambda message: (
            message.type in ("error", "warning") and problems.append(f"console {message.type}: {message.text}")
        ),
    )
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("dialog", lambda dialog: problems.append(f"a script opened a dialog: {dialog.message}") or dialog.dismiss())
    page.goto(page_path.as_uri())
    page.wait_for_selector('body[data-ready="1"]')
    try:
        yield page
    finally:
        context.close()
    assert not problems, problems


def agent_runs(toy_suite_dir: Path, root: Path, agent: str) -> tuple[Path, Path]:
    """Two runs of the same two models: one by the tool loop (gpt-4o resolves both tasks, qwen one),
    one by `agent` (gpt-4o one task, qwen none, its second attempt a crash: agent_error), scored."""
    suite = two_task_suite(toy_suite_dir, root)
    loop = write_run(root / "runs", suite, "loop", {"gpt-4o": ("gpt-4o", [[OK], [OK]]), "qwen": ("qwen", [[OK], [{}]])})
    command = {"agent": agent, "evidence": ["diff", "traffic", "usage"]}
    crashed = {**command, "stop": "agent_error", "error": "the agent command exited with code 1: KeyError"}
    plan = {"gpt-4o": ("gpt-4o", [[{**OK, **command}], [command]]), "qwen": ("qwen", [[command], [crashed]])}
    return loop, write_run(root / "runs", suite, "agent", plan)


USER_EVIL = "</script><script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">"
USER_USAGE = {"prompt_tokens": 1_000_000, "completion_tokens": 0, "total_tokens": 1_000_000}


def asked(classes: dict[str, int], user_model: str = "gpt-4o-mini", answer: str = "Cents, rounded half up.") -> dict:
    """A write_run kind's simulated-user fields: questions by class (each a `user` event of the
    trajectory, answered `answer`), 1M prompt tokens when any."""
    questions = sum(classes.values())
    fields = {"user": "simulated", "user_model": user_model, "questions": questions, "question_classes": classes}
    kinds = [k for k, n in classes.items() for _ in range(n)]
    exchanges = [
        {"question": f"Question {i + 1}: which unit?", "answer": answer, "class": k, "via": "ask_user", "redacted": 0}
        for i, k in enumerate(kinds)
    ]
    return {"record": fields | {"user_usage": USER_USAGE if questions else {}}, "exchanges": exchanges}


def user_runs(toy_suite_dir: Path, root: Path) -> tuple[Path, Path, Path]:
    """Three runs of one suite: `alone`, gpt-4o without a user, resolves one task of two; `asked`,
    with a user (gpt-4o-mini), resolves both, asking 1 informative question on the first task,
    1 informative and 1 redundant on the second; `evil`, qwen asking a user named with markup."""
    suite = two_task_suite(toy_suite_dir, root)
    alone = write_run(root / "runs", suite, "alone", {"gpt-4o": ("gpt-4o", [[OK], [{}]])})
    plan = {"gpt-4o": ("gpt-4o", [[OK | asked({"informative": 1})], [OK | asked({"informative": 1, "redundant": 1})]])}
    with_user = write_run(root / "runs", suite, "asked", plan)
    evil_kind = OK | asked({"unanswered": 1}, USER_EVIL, answer=USER_EVIL)
    evil = write_run(root / "runs", suite, "evil", {"qwen": ("qwen", [[evil_kind]])})
    return alone, with_user, evil
