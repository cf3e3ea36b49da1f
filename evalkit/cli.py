"""The `evalkit` command line: run, serve, tasks, evaluate, sandbox."""

from __future__ import annotations

import json
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from evalkit.errors import EvalkitError
from evalkit.gather.environment import HOST_CA_BUNDLE
from evalkit.gather.gather import REPORT, GatherOptions, gather, open_repository
from evalkit.gather.history import DEFAULT_TEST_GLOBS, SizeLimits
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import DEFAULT_CONFIG, Sampling, load_config, models_table, resolve_model
from evalkit.models.policies import NullPolicy, OraclePolicy, Policy, ReplayPolicy
from evalkit.models.server import ModelServer
from evalkit.report.compare import compare_command
from evalkit.report.html import merge_published, published_from_config, read_published, write_leaderboard
from evalkit.runner import fan_out
from evalkit.runs.display import RunDisplay, summary_table
from evalkit.runs.orchestrate import LimitOverrides, execute, open_run, plan_attempts
from evalkit.runs.store import RunStore
from evalkit.sandbox.backend import DockerBackend, docker_client
from evalkit.sandbox.containers import prune, sweep_orphans
from evalkit.sandbox.docker_sandbox import SandboxSpec
from evalkit.sandbox.images import BASE_IMAGE, build_base_image
from evalkit.scoring.attempt_scores import ScoringSettings, load_settings
from evalkit.scoring.correctness import CorrectnessResult, evaluate_patch
from evalkit.scoring.health import TaskHealth, validate_task
from evalkit.scoring.patches import changed_lines, changed_paths
from evalkit.scoring.predictions import (
    load_predictions,
    safe_name,
    summary_report,
    write_atomic,
    write_instance_report,
)
from evalkit.scoring.run_scores import SUMMARY, run_tasks, score_run
from evalkit.stats.commands import export_command, import_command, stats_command
from evalkit.tasks import Suite, Task, load_suite

app = typer.Typer(
    help="Evaluate coding agents on short-prompt, large-diff tasks in Docker sandboxes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
tasks_app = typer.Typer(help="List and validate task suites.", no_args_is_help=True)
sandbox_app = typer.Typer(help="Sandbox images and clean-up.", no_args_is_help=True)
app.add_typer(tasks_app, name="tasks")
app.add_typer(sandbox_app, name="sandbox")

# Piped output (CI logs, `make demo | tee`) gets a wide table instead of rich's 80-column default.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


def _load(suite_path: Path) -> Suite:
    suite = load_suite(suite_path)
    for error in suite.errors:
        err_console.print(f"[yellow]skipped[/] {escape(str(error))}", highlight=False, soft_wrap=True)
    if not suite.tasks:
        raise EvalkitError(f"{suite_path}: no usable task")
    return suite


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=False,
    )


def _open_backend(run_id: str) -> DockerBackend:
    client = docker_client()
    swept = sweep_orphans(client)
    if swept:
        err_console.print(f"removed {len(swept)} container(s) left by dead evalkit runs")
    return DockerBackend(client, run_id)


def _interrupted(backend: DockerBackend, what: str) -> typer.Exit:
    backend.close()
    err_console.print(f"[red]interrupted[/]: containers removed; {what}", soft_wrap=True)
    return typer.Exit(130)


# -- tasks -----------------------------------------------------------------------------------
@tasks_app.command("list")
def tasks_list(suite: Annotated[Path, typer.Argument(help="Suite folder or .jsonl file.")]) -> None:
    """List a suite's tasks with their prompt and change sizes."""
    loaded = _load(suite)
    table = Table(title=f"{loaded.name}: {len(loaded.tasks)} tasks")
    for column in ("task", "repo", "prompt chars", "changed lines", "files", "F2P", "P2P", "tags"):
        table.add_column(
            column, justify="right" if column in {"prompt chars", "changed lines", "files", "F2P", "P2P"} else "left"
        )
    for task in loaded.tasks:
        table.add_row(
            task.id,
            task.repo,
            str(len(task.prompt)),
            str(changed_lines(task.patch)),
            str(len(changed_paths(task.patch))),
            str(len(task.tests.fail_to_pass)),
            str(len(task.tests.pass_to_pass)),
            ", ".join(task.tags),
        )
    console.print(table)


def _health_table(rows: list[TaskHealth]) -> Table:
    table = Table(title="Task validation (reference patch x runs, empty patch x 1)")
    for column in ("task", "gold", "empty", "flaky", "F2P", "P2P", "time s", "verdict"):
        table.add_column(column)
    for row in rows:
        gold = f"{sum(row.gold_runs)}/{len(row.gold_runs)}"
        verdict = "[green]valid[/]" if row.valid else "[red]invalid[/]: " + "; ".join(row.problems)
        table.add_row(
            row.task_id,
            gold,
            "resolved" if row.empty_resolved else "unresolved",
            "yes" if row.flaky else "no",
            str(row.fail_to_pass),
            str(row.pass_to_pass),
            f"{row.duration_s:.1f}",
            verdict,
        )
    return table


@tasks_app.command("validate")
def tasks_validate(
    suite: Annotated[Path, typer.Argument(help="Suite folder or .jsonl file.")],
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write JSON rows to this file; `--json -` (or `--json` last) prints them."),
    ] = None,
    runs: Annotated[int, typer.Option(min=1, help="Reference-patch runs per task (flakiness check).")] = 3,
    concurrency: Annotated[int, typer.Option(min=1, help="Tasks validated at once.")] = 2,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids.")] = None,
) -> None:
    """Check every task: the reference patch must resolve it every time, the empty patch never."""
    loaded = _load(suite)
    selected = loaded.select(task)
    backend = _open_backend(new_run_id())
    rows: dict[str, TaskHealth] = {}
    try:
        with _progress() as progress:
            bar = progress.add_task("validating", total=len(selected))

            def record(item: Task, health: TaskHealth) -> None:
                rows[item.id] = health
                progress.advance(bar)

            def failed(item: Task, error: BaseException) -> None:
                raise error

            fan_out(
                selected,
                lambda t: validate_task(t, backend, runs),
                backend=backend,
                concurrency=concurrency,
                on_result=record,
                on_error=failed,
            )
    except KeyboardInterrupt:
        raise _interrupted(backend, "nothing was written") from None
    finally:
        backend.close()
    ordered = [rows[t.id] for t in selected]
    payload = json.dumps([r.model_dump(mode="json") for r in ordered], indent=2)
    if json_out == "-":
        sys.stdout.write(payload + "\n")
    else:
        console.print(_health_table(ordered))
        if json_out:
            write_atomic(Path(json_out), payload + "\n")
            console.print(f"JSON rows written to {json_out}")
    valid = sum(r.valid for r in ordered)
    err_console.print(f"{valid}/{len(ordered)} tasks valid")
    if valid < len(ordered):
        raise typer.Exit(1)


# -- evaluate --------------------------------------------------------------------------------
@app.command("evaluate")
def evaluate(
    predictions: Annotated[Path, typer.Argument(help="SWE-bench predictions (.json or .jsonl).")],
    suite: Annotated[Path, typer.Option(help="Suite folder or .jsonl file the predictions are for.")],
    run_id: Annotated[str | None, typer.Option(help="Name of this evaluation (default: a timestamp).")] = None,
    out: Annotated[Path, typer.Option(help="Where reports go.")] = Path("reports/evaluations"),
    concurrency: Annotated[int, typer.Option(min=1)] = 2,
) -> None:
    """Score SWE-bench-format predictions against a suite's hidden tests; write per-instance reports."""
    loaded = _load(suite)
    preds = load_predictions(predictions)
    known = {t.id: t for t in loaded.tasks}
    unknown = [p.instance_id for p in preds if p.instance_id not in known]
    for instance_id in unknown:
        err_console.print(f"[yellow]skipped[/] {escape(f'{predictions}: instance `{instance_id}` is not in {suite}')}")
    run_id = run_id or new_run_id()
    out_dir = out / run_id
    backend = _open_backend(run_id)
    jobs = [p for p in preds if p.instance_id in known]
    results: dict[str, dict[str, CorrectnessResult]] = {}
    try:
        with _progress() as progress:
            bar = progress.add_task("evaluating", total=len(jobs))

            def record(pred, result: CorrectnessResult) -> None:
                results.setdefault(pred.model_name_or_path, {})[pred.instance_id] = result
                write_instance_report(out_dir, pred, result)
                progress.advance(bar)

            def failed(pred, error: BaseException) -> None:
                result = CorrectnessResult(task_id=pred.instance_id, error=str(error))
                record(pred, result)

            fan_out(
                jobs,
                lambda p: evaluate_patch(known[p.instance_id], p.model_patch or "", backend),
                backend=backend,
                concurrency=concurrency,
                on_result=record,
                on_error=failed,
            )
    except KeyboardInterrupt:
        raise _interrupted(backend, f"finished instances are in {out_dir}") from None
    finally:
        backend.close()
    table = Table(title=f"evaluation {run_id}")
    for column in ("model", "instances", "resolved", "unresolved", "not applied", "errors"):
        table.add_column(column)
    for model, per_instance in results.items():
        report = summary_report(per_instance, unknown)
        write_atomic(out_dir / f"{safe_name(model)}.report.json", json.dumps(report, indent=2) + "\n")
        table.add_row(
            model,
            str(len(per_instance)),
            str(report["resolved_instances"]),
            str(report["unresolved_instances"]),
            str(len(report["patch_not_applied_ids"])),
            str(report["error_instances"]),
        )
    console.print(table)
    console.print(f"reports in {out_dir}")


# -- run -------------------------------------------------------------------------------------
@app.command("run")
def run(
    model: Annotated[
        list[str],
        typer.Option(
            "--model",
            "-m",
            help="Model to run (repeatable): an [models.NAME] entry of evalkit.toml, oracle, null, "
            "replay:TRAJECTORY, or a model id at --base-url.",
        ),
    ],
    suite: Annotated[Path, typer.Option(help="Suite folder or .jsonl file.")] = Path("tasks/demo"),
    samples: Annotated[int, typer.Option(min=1, help="Attempts per task and model.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Attempts at once.")] = 2,
    run_id: Annotated[str | None, typer.Option(help="Run name; an existing one is resumed.")] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N tasks.")] = None,
    out: Annotated[Path, typer.Option(help="Where run folders go.")] = Path("reports/runs"),
    config: Annotated[Path | None, typer.Option(help="Model config (default ./evalkit.toml if present).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for models not in the config.")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="Variable holding the key (default OPENAI_API_KEY).")] = None,
    temperature: Annotated[float | None, typer.Option(min=0)] = None,
    top_p: Annotated[float | None, typer.Option()] = None,
    max_completion_tokens: Annotated[int | None, typer.Option(help="Completion tokens per request.")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    request_timeout: Annotated[float | None, typer.Option(help="Seconds per model request.")] = None,
    max_retries: Annotated[int | None, typer.Option(min=0, help="Retries per model request.")] = None,
    max_turns: Annotated[int | None, typer.Option(min=1, help="Override every task's turn budget.")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Override every task's token budget.")] = None,
    wall_time: Annotated[float | None, typer.Option(help="Override every task's seconds per attempt.")] = None,
    command_timeout: Annotated[float | None, typer.Option(help="Override every task's seconds per command.")] = None,
    judge: Annotated[str | None, typer.Option(help="Reviewer model grading each diff (recorded apart).")] = None,
    baseline: Annotated[
        Path | None, typer.Option(help="A baseline run folder: compare with it at the end and exit 1 on a regression.")
    ] = None,
) -> None:
    """Attempt every task of a suite with each model in Docker sandboxes; record and score each attempt."""
    loaded = _load(suite)
    selected = loaded.select(task)[:limit] if limit else loaded.select(task)
    sampling = Sampling(temperature=temperature, top_p=top_p, max_tokens=max_completion_tokens, seed=seed)
    config_data = load_config(config)
    config_path = config or DEFAULT_CONFIG
    models_config = models_table(config_data, config_path)
    settings = load_settings(config_data, config_path)
    judge_client = _judge_client(judge, models_config, config_path)
    specs = []
    for name in dict.fromkeys(model):
        spec = resolve_model(
            name,
            models_config,
            base_url=base_url,
            api_key_env=api_key_env,
            sampling=sampling,
            config_path=config or DEFAULT_CONFIG,
        )
        changes = {"request_timeout_s": request_timeout, "max_retries": max_retries}
        specs.append(spec.model_copy(update={k: v for k, v in changes.items() if v is not None}))
    run_id = run_id or new_run_id()
    store = RunStore(out / run_id)
    open_run(store, run_id, loaded, suite, specs, samples)
    names = [s.name for s in specs]
    plan = plan_attempts(selected, names, samples, store.finished_keys())
    skipped = len(selected) * samples * len(names) - len(plan)
    if skipped:
        err_console.print(f"resuming run {run_id}: {skipped} finished attempt(s) kept, {len(plan)} to go")
    overrides = LimitOverrides(max_turns, max_tokens, wall_time, command_timeout)
    backend = _open_backend(run_id)
    try:
        with RunDisplay(err_console, len(plan), names) as display:
            execute(
                plan,
                specs,
                loaded.tasks,
                backend,
                store,
                concurrency=concurrency,
                overrides=overrides,
                output_limit=SandboxSpec(image="").output_limit,
                on_record=display.add,
            )
    except KeyboardInterrupt:
        raise _interrupted(
            backend, f"finished attempts are in {store.results_path}; resume with --run-id {run_id}"
        ) from None
    finally:
        backend.close()
    _score_and_show(store, {t.id: t for t in loaded.tasks}, settings, judge_client, f"run {run_id} on {loaded.name}")
    if baseline is not None:
        code = compare_command(baseline, store.dir, 0.02, 0.05, None, None, None, None, console)
        if code:
            raise typer.Exit(code)


def _judge_client(name: str | None, models_config: dict, config_path: Path) -> ChatClient | None:
    if name is None:
        return None
    spec = resolve_model(name, models_config, config_path=config_path)
    if spec.builtin:
        raise EvalkitError(f"--judge {name}: a built-in policy cannot review code; name a real model")
    return ChatClient(spec)


def _score_and_show(
    store: RunStore, tasks: dict[str, Task], settings: ScoringSettings, judge: ChatClient | None, title: str
) -> None:
    warn = lambda message: err_console.print(f"[yellow]warning[/] {escape(message)}", soft_wrap=True)  # noqa: E731
    with err_console.status("scoring"):
        score_run(store, tasks, settings, judge, warn)
    summary = json.loads((store.dir / SUMMARY).read_text())
    console.print(summary_table(summary["models"], title))
    console.print(f"run folder: {store.dir} (results.jsonl, scores.jsonl, summary.json, trajectories/)")


@app.command("score")
def score(
    run_dir: Annotated[Path, typer.Argument(help="A run folder (reports/runs/<run_id>).")],
    suite: Annotated[Path | None, typer.Option(help="The run's suite, if it moved.")] = None,
    config: Annotated[
        Path | None, typer.Option(help="Scoring weights, penalties, prices (default ./evalkit.toml).")
    ] = None,
    judge: Annotated[str | None, typer.Option(help="Reviewer model grading each diff (recorded apart).")] = None,
) -> None:
    """Re-score a finished run (new weights, prices, penalties or a judge) without re-running agents."""
    store = RunStore(run_dir)
    if not store.results_path.exists():
        raise EvalkitError(f"{run_dir}: no results.jsonl; is this an evalkit run folder?")
    config_data = load_config(config)
    config_path = config or DEFAULT_CONFIG
    settings = load_settings(config_data, config_path)
    judge_client = _judge_client(judge, models_table(config_data, config_path), config_path)
    _score_and_show(store, run_tasks(store, suite), settings, judge_client, f"run {run_dir.name} (re-scored)")


@app.command("serve")
def serve(
    policy: Annotated[str, typer.Option(help="oracle, null or replay.")] = "oracle",
    suite: Annotated[Path | None, typer.Option(help="Suite the oracle knows (oracle only).")] = None,
    trajectory: Annotated[Path | None, typer.Option(help="Trajectory file or folder (replay only).")] = None,
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
) -> None:
    """Serve a reference policy as an OpenAI-compatible endpoint (/v1/chat/completions, /v1/models)."""
    if policy == "oracle":
        if suite is None:
            raise EvalkitError("--policy oracle needs --suite: the oracle plays the reference changes of a suite")
        served: Policy = OraclePolicy(_load(suite).tasks)
    elif policy == "null":
        served = NullPolicy()
    elif policy == "replay":
        if trajectory is None:
            raise EvalkitError("--policy replay needs --trajectory FILE (a trajectory .jsonl or a folder of them)")
        served = ReplayPolicy(trajectory)
    else:
        raise EvalkitError(f"--policy {policy}: choose oracle, null or replay")
    with ModelServer({policy: served}, host=host, port=port) as server:
        console.print(f"serving model `{policy}` at {server.base_url} (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            console.print("stopped")


# -- gather ----------------------------------------------------------------------------------
@app.command("gather")
def gather_command(
    repo: Annotated[str, typer.Argument(help="A local git repository, or a URL to clone.")],
    out: Annotated[Path, typer.Option(help="Suite folder to write (tasks of the same commits are replaced).")],
    since: Annotated[str | None, typer.Option(help="Only commits after this date (git --since).")] = None,
    until: Annotated[str | None, typer.Option(help="Only commits before this date (git --until).")] = None,
    max_tasks: Annotated[int, typer.Option(min=1)] = 20,
    min_lines: Annotated[int, typer.Option(min=0, help="Minimum changed source (non-test) lines.")] = 40,
    max_lines: Annotated[int, typer.Option(min=1, help="Maximum changed source (non-test) lines.")] = 1000,
    min_files: Annotated[int, typer.Option(min=1, help="Minimum files changed, tests included.")] = 2,
    test_glob: Annotated[
        list[str] | None,
        typer.Option("--test-glob", help="Test file globs (repeatable; default tests/**, test_*.py...)."),
    ] = None,
    max_prompt_chars: Annotated[int, typer.Option(min=40)] = 400,
    rewriter: Annotated[str | None, typer.Option(help="Model that rewrites prompts (any --model name).")] = None,
    runs: Annotated[int, typer.Option(min=1, help="Test runs before and after, to drop flaky tests.")] = 3,
    max_pass_to_pass: Annotated[int, typer.Option(min=0, help="PASS_TO_PASS tests kept per task (sampled).")] = 50,
    neighbour_modules: Annotated[
        int, typer.Option(min=0, help="Existing test modules beside the touched ones, run for PASS_TO_PASS.")
    ] = 5,
    ca_bundle: Annotated[Path, typer.Option(help="CA bundle image builds use to reach PyPI.")] = HOST_CA_BUNDLE,
    config: Annotated[Path | None, typer.Option(help="Model config for --rewriter (default ./evalkit.toml).")] = None,
) -> None:
    """Mine a repository's history for validated short-prompt, large-diff tasks."""
    config_path = config or DEFAULT_CONFIG
    open_repository(repo)  # a bad path or an unreachable URL is one line, before any container starts
    rewriter_client = None
    if rewriter:
        spec = resolve_model(rewriter, models_table(load_config(config), config_path), config_path=config_path)
        if spec.builtin:
            raise EvalkitError(f"--rewriter {rewriter}: a built-in policy cannot rewrite prompts; name a real model")
        rewriter_client = ChatClient(spec)
    options = GatherOptions(
        since=since,
        until=until,
        max_tasks=max_tasks,
        limits=SizeLimits(min_lines, max_lines, min_files),
        test_globs=tuple(test_glob) if test_glob else DEFAULT_TEST_GLOBS,
        max_prompt_chars=max_prompt_chars,
        runs=runs,
        max_pass_to_pass=max_pass_to_pass,
        neighbour_modules=neighbour_modules,
        ca_bundle=ca_bundle,
        rewriter=rewriter_client,
    )
    backend = _open_backend(new_run_id())
    try:
        report = gather(
            repo, out, options, backend, log=lambda line: err_console.print(line, highlight=False, markup=False)
        )
    except KeyboardInterrupt:
        raise _interrupted(backend, "no suite was written") from None
    finally:
        backend.close()
    accepted = Table(
        title=f"{len(report.accepted)} task(s) gathered from {report.repo} ({report.scanned} commits scanned)"
    )
    for column in ("task", "prompt chars", "changed lines", "files", "F2P", "P2P"):
        accepted.add_column(column, justify="left" if column == "task" else "right")
    for item in report.accepted:
        accepted.add_row(
            item.id,
            str(len(item.prompt)),
            str(changed_lines(item.patch)),
            str(len(set(changed_paths(item.patch)) | set(changed_paths(item.test_patch)))),
            str(len(item.tests.fail_to_pass)),
            str(len(item.tests.pass_to_pass)),
        )
    console.print(accepted)
    if report.rejected:
        rejected = Table(title=f"{len(report.rejected)} commit(s) left out")
        for column in ("commit", "subject", "stage", "reason"):
            rejected.add_column(column)
        for item in report.rejected:
            rejected.add_row(item.sha[:10], escape(item.subject[:50]), item.stage, escape(item.reason))
        console.print(rejected)
    console.print(f"suite: {out}; every decision in {out / REPORT}")


# -- stats, import, export --------------------------------------------------------------------
@app.command("stats")
def stats(
    suite: Annotated[Path, typer.Argument(help="Suite folder, or a SWE-bench-format file (jsonl/json/csv/parquet).")],
    json_out: Annotated[
        str | None, typer.Option("--json", help="Print the figures as JSON instead of the table (`--json` alone).")
    ] = None,
    reference: Annotated[
        str | None, typer.Option(help="Compute SWE-bench figures now from this source (file or HF dataset name).")
    ] = None,
) -> None:
    """The suite's prompt, change and test sizes side by side with SWE-bench's (sources shown)."""
    code = stats_command(suite, json_out is not None, reference, console)
    if code:
        raise typer.Exit(code)


@tasks_app.command("import")
def tasks_import(
    kind: Annotated[str, typer.Argument(help="Only `swebench`.")],
    source: Annotated[
        str, typer.Argument(help="A Hugging Face dataset name[:split], or a JSON/JSONL/CSV/Parquet file.")
    ],
    out: Annotated[Path, typer.Option(help="Suite folder to write.")],
    repo_dir: Annotated[Path | None, typer.Option(help="Folder of local clones (owner__name or name).")] = None,
) -> None:
    """Import SWE-bench-format rows as an evalkit suite."""
    if kind != "swebench":
        raise EvalkitError(f"tasks import {kind}: only `swebench` is supported")
    code = import_command(source, out, repo_dir, console, err_console)
    if code:
        raise typer.Exit(code)


@tasks_app.command("export")
def tasks_export(
    suite: Annotated[Path, typer.Argument(help="Suite folder or .jsonl file.")],
    format: Annotated[str, typer.Option("--format", help="Only `swebench`.")] = "swebench",
    out: Annotated[Path | None, typer.Option(help="File to write (.jsonl or .json); default stdout (JSONL).")] = None,
) -> None:
    """Export a suite as SWE-bench rows (the 12 dataset columns), for SWE-bench tooling."""
    code = export_command(suite, format, out, console, err_console)
    if code:
        raise typer.Exit(code)


# -- compare -----------------------------------------------------------------------------------
@app.command("compare")
def compare(
    base: Annotated[Path, typer.Argument(help="The reference run folder (reports/runs/<run_id>).")],
    new: Annotated[Path, typer.Argument(help="The run to check against it.")],
    max_drop: Annotated[float, typer.Option(help="Smallest drop (0–1 scale) that counts as a regression.")] = 0.02,
    alpha: Annotated[
        float, typer.Option(help="Significance level of the one-sided tests; intervals are 1 − alpha.")
    ] = 0.05,
    markdown: Annotated[
        Path | None, typer.Option(help="Write a markdown summary (CI job summary, PR comment).")
    ] = None,
    junit: Annotated[
        Path | None, typer.Option(help="Write JUnit XML: one case per task, one per deciding axis.")
    ] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the comparison as JSON (`--json` alone: print it).")
    ] = None,
    base_model: Annotated[str | None, typer.Option(help="The base run's model, when it has several.")] = None,
    new_model: Annotated[str | None, typer.Option(help="The new run's model, when it has several.")] = None,
) -> None:
    """Compare two runs of one suite, paired by task and sample: exit 1 on a significant regression."""
    code = compare_command(
        base, new, max_drop, alpha, markdown, junit, base_model, new_model, console, json_out=json_out
    )
    if code:
        raise typer.Exit(code)


# -- report ------------------------------------------------------------------------------------
@app.command("report")
def report(
    run_dirs: Annotated[
        list[Path] | None, typer.Argument(help="Run folders (default: every folder under reports/runs).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Folder for index.html and the data files.")] = Path("reports/leaderboard"),
    published: Annotated[Path | None, typer.Option(help="CSV model,benchmark,score of published scores (0–1).")] = None,
    config: Annotated[Path | None, typer.Option(help='evalkit.toml with [published."MODEL"] tables.')] = None,
) -> None:
    """Write the self-contained HTML leaderboard of finished runs (opens from disk)."""
    scores = published_from_config(load_config(config), config or DEFAULT_CONFIG)
    if published is not None:
        scores = merge_published(scores, read_published(published))
    if run_dirs:
        page = write_leaderboard(run_dirs, out, scores)
    else:
        root = Path("reports/runs")
        found = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
        if not found:
            raise EvalkitError("no run folder given and none under reports/runs; run `evalkit run` first")

        def skipped(message: str) -> None:
            err_console.print(f"[yellow]skipped[/] {escape(message)}", highlight=False, soft_wrap=True)

        page = write_leaderboard(found, out, scores, on_skip=skipped)
    console.print(f"leaderboard: {escape(str(page))} (data: leaderboard.json, leaderboard.csv, attempts.csv)")


# -- sandbox ---------------------------------------------------------------------------------
@sandbox_app.command("build-base")
def sandbox_build_base(
    tag: Annotated[str, typer.Option(help="Image tag.")] = BASE_IMAGE,
    force: Annotated[bool, typer.Option(help="Rebuild even if present.")] = False,
    offline: Annotated[bool, typer.Option(help="Skip the registry; use debootstrap.")] = False,
    mirror: Annotated[str | None, typer.Option(help="Debian mirror for debootstrap (default: the host's).")] = None,
) -> None:
    """Build the base sandbox image (from a registry if one answers, else debootstrap + docker import)."""
    build_base_image(
        docker_client(),
        tag,
        force=force,
        offline=offline,
        mirror=mirror,
        log=lambda line: err_console.print(line, highlight=False),
    )
    console.print(f"base image ready: {tag}")


@sandbox_app.command("prune")
def sandbox_prune(
    run_id: Annotated[str | None, typer.Option(help="Only this run's containers.")] = None,
) -> None:
    """Remove evalkit containers left behind (all of them, or one run's)."""
    removed = prune(docker_client(), run_id)
    for container in removed:
        console.print(f"removed {container.id} (run {container.run_id}, task {container.task_id})")
    console.print(f"{len(removed)} container(s) removed")


def _sigterm_as_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _bare_json_means_stdout(argv: list[str]) -> list[str]:
    """`--json` given without a value (last, or before another option) means `--json -`."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        after = argv[i + 1] if i + 1 < len(argv) else None
        if arg == "--json" and (after is None or (after.startswith("-") and after != "-")):
            out.append("-")
    return out


def main() -> None:
    """Console entry point: user errors are one line on stderr and exit code 2."""
    signal.signal(signal.SIGTERM, _sigterm_as_interrupt)
    try:
        app(args=_bare_json_means_stdout(sys.argv[1:]), prog_name="evalkit")
    except EvalkitError as exc:
        err_console.print(f"[red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
        sys.exit(2)
