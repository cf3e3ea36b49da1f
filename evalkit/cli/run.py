"""`evalkit run`, `score` and `serve`: run agents on a suite, (re-)score runs, serve reference policies."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from evalkit.agent.agent_table import AGENTS, COMMAND_PREFIX, DEFAULT_AGENT
from evalkit.cli.common import (
    DEFAULT_BACKEND,
    POOL_HELP,
    SKIP_INVALID_HELP,
    STRICT_ENV_HELP,
    BackendOption,
    ExecutorOption,
    RayAddressOption,
    RegistryOption,
    _interrupted,
    _load,
    app,
    console,
    err_console,
    given_options,
    new_run_id,
    run_id_option,
)
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.runs.folders import RUNS_ROOT, resume_command, run_folder

if TYPE_CHECKING:  # the rest is imported by the commands that use it: `evalkit --help` stays fast
    from evalkit.review.endpoint import ReviewerChoice
    from evalkit.runs.store import RunStore
    from evalkit.sandbox.workspace import WorkspaceSource
    from evalkit.scoring.attempt_scores import ScoringSettings
    from evalkit.scoring.run_summary import RunSummary
    from evalkit.tasks import Task

AGENT_HELP = (
    f"What works on each task: {', '.join(sorted(AGENTS))} ({DEFAULT_AGENT}: evalkit's own loop driving the "
    "model), or "
    f"{COMMAND_PREFIX}TEMPLATE (a shell command run in the sandbox with EVALKIT_PROMPT, OPENAI_BASE_URL and "
    "OPENAI_API_KEY set to the run's model proxy)."
)
EXIT_ERRORS = 3  # the run finished, but some attempts ended in endpoint_error or sandbox_error (not scored)


@app.command("run")
def run(
    ctx: typer.Context,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model",
            "-m",
            help="Model to run (repeatable): an \\[models.NAME] entry of evalkit.toml, oracle, null, "
            "replay:TRAJECTORY, or a model id at --base-url. Left out with the --run-id of an existing run: "
            "the run's models.",
        ),
    ] = None,
    suite: Annotated[Path, typer.Option(help="Suite folder or .jsonl (resuming: the run's).")] = Path("tasks/demo"),
    samples: Annotated[int, typer.Option(min=1, help="Attempts per task and model (resuming: the run's).")] = 1,
    concurrency: Annotated[
        int, typer.Option(min=1, help="Attempts at once (default 2; --executor ray: the cluster's sandboxes).")
    ] = 2,
    run_id: Annotated[
        str | None,
        typer.Option(
            help="Run name (letters, digits, . _ -); an existing one is resumed, alone: as its run.json records.",
            callback=run_id_option,
        ),
    ] = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="Only these task ids.")] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Only the first N tasks.")] = None,
    out: Annotated[Path, typer.Option(help="Where run folders go.")] = RUNS_ROOT,
    config: Annotated[Path | None, typer.Option(help="Model config (default ./evalkit.toml if present).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Endpoint for models not in the config.")] = None,
    api_key_env: Annotated[str | None, typer.Option(help="Variable holding the key (default OPENAI_API_KEY).")] = None,
    temperature: Annotated[float | None, typer.Option(min=0)] = None,
    top_p: Annotated[float | None, typer.Option()] = None,
    max_completion_tokens: Annotated[int | None, typer.Option(help="Completion tokens per request.")] = None,
    seed: Annotated[int | None, typer.Option()] = None,
    request_timeout: Annotated[float | None, typer.Option(help="Seconds per model request.")] = None,
    max_retries: Annotated[int | None, typer.Option(min=0, help="Retries per model request.")] = None,
    tool_choice: Annotated[
        str | None, typer.Option(help="auto, required, none, or the name of the one tool the model must call.")
    ] = None,
    parallel_tool_calls: Annotated[
        bool | None, typer.Option("--parallel-tool-calls/--no-parallel-tool-calls", help="Sent as is (default: unset).")
    ] = None,
    reasoning_effort: Annotated[str | None, typer.Option(help="Sent as is, e.g. low, medium, high.")] = None,
    reasoning: Annotated[
        bool | None,
        typer.Option(
            "--reasoning/--no-reasoning",
            help="A reasoning model: no temperature, top_p, max_tokens; max_completion_tokens instead.",
        ),
    ] = None,
    stop: Annotated[list[str] | None, typer.Option("--stop", help="Stop sequence (repeatable).")] = None,
    stream: Annotated[
        bool | None, typer.Option("--stream/--no-stream", help="Stream answers (SSE), assembled as they come.")
    ] = None,
    max_connections: Annotated[
        int | None, typer.Option(min=1, help="Requests in flight per endpoint, over all attempts.")
    ] = None,
    max_turns: Annotated[int | None, typer.Option(min=1, help="Override every task's turn budget.")] = None,
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Override every task's token budget.")] = None,
    wall_time: Annotated[float | None, typer.Option(help="Override every task's seconds per attempt.")] = None,
    command_timeout: Annotated[float | None, typer.Option(help="Override every task's seconds per command.")] = None,
    reviewer: Annotated[
        str | None,
        typer.Option(
            "--reviewer",
            "--judge",
            help="Reviewer grading each change beside the axes: a model, or scripted-reviewer (built in).",
        ),
    ] = None,
    reviewer_mode: Annotated[
        str, typer.Option(help="agentic (reads the trees in a read-only sandbox) or no-tools (one request).")
    ] = "agentic",
    baseline: Annotated[
        Path | None,
        typer.Option(help="A baseline run folder or run id: compare with it at the end and exit 1 on a regression."),
    ] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help=SKIP_INVALID_HELP)] = False,
    strict_env: Annotated[bool, typer.Option("--strict-env", help=STRICT_ENV_HELP)] = False,
    agent: Annotated[str, typer.Option(help=AGENT_HELP)] = DEFAULT_AGENT,
    user: Annotated[
        str,
        typer.Option(
            "--user",
            help="none, or simulated: the agent (tool-loop) may ask the user who wrote the prompt with `ask_user`, "
            "answered by --user-model from the task's hidden intent (tasks may ask for it: \\[user] mode).",
        ),
    ] = "none",
    user_model: Annotated[
        str,
        typer.Option(
            "--user-model",
            help="Who answers `ask_user`: oracle-user (built in, from the task's metadata intent), or any model "
            "--model accepts but the built-in policies.",
        ),
    ] = "oracle-user",
    retry_errors: Annotated[
        bool,
        typer.Option(
            "--retry-errors",
            help="With --run-id of a run (alone: as its run.json records): also run again its attempts that ended "
            "in endpoint_error; a model's endpoint may move for it.",
        ),
    ] = False,
    check_endpoints: Annotated[
        bool,
        typer.Option("--preflight/--no-preflight", help="Check each model's endpoint once before the run starts."),
    ] = True,
    engine_wait: Annotated[
        float,
        typer.Option(
            min=0,
            help="Seconds to wait for a Docker engine that stops answering (attempts pause) before the run "
            "stops, resumable.",
        ),
    ] = 300.0,
    backend_name: BackendOption = DEFAULT_BACKEND,
    pool: Annotated[bool, typer.Option("--pool/--no-pool", help=POOL_HELP)] = True,
    executor_name: ExecutorOption = DEFAULT_EXECUTOR,
    ray_address: RayAddressOption = None,
    registry: RegistryOption = None,
) -> None:
    """Attempt every task of a suite with each model in Docker sandboxes; record and score each attempt."""
    from evalkit.agent.agent_table import check_agent
    from evalkit.models.endpoint import Sampling
    from evalkit.runs.limits import LimitOverrides
    from evalkit.runs.run_suite import RunInterrupted, run_suite
    from evalkit.runs.settings import (
        AttemptSettings,
        ExecutorSettings,
        ModelChoice,
        RunSettings,
        SandboxSettings,
        TaskChoice,
    )
    from evalkit.runs.user_setup import UserSetup, check_user_mode
    from evalkit.scoring.attempt_scores import load_settings

    baseline_dir = run_folder(baseline, out) if baseline is not None else None
    given = given_options(ctx)
    knobs = {
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "reasoning_effort": reasoning_effort,
        "reasoning": reasoning,
        "stop": stop or None,
        "stream": stream,
        "max_connections": max_connections,
    }
    settings = RunSettings(
        run_id=run_id or new_run_id(),
        out=out,
        tasks=TaskChoice(suite, samples, task, limit, skip_invalid, strict_env),
        models=ModelChoice(
            names=list(dict.fromkeys(model or [])),
            config=config,
            base_url=base_url,
            api_key_env=api_key_env,
            sampling=Sampling(temperature=temperature, top_p=top_p, max_tokens=max_completion_tokens, seed=seed),
            knobs=knobs,
            request_timeout_s=request_timeout,
            max_retries=max_retries,
            reviewer=reviewer,
            reviewer_mode=reviewer_mode,
            preflight=check_endpoints,
        ),
        attempt=AttemptSettings(
            agent=check_agent(agent),
            limits=LimitOverrides(max_turns, max_tokens, wall_time, command_timeout),
            user=UserSetup(check_user_mode(user), user_model),  # type: ignore[arg-type]  # checked
        ),
        sandbox=SandboxSettings(backend_name, pool, engine_wait, registry),
        executor=ExecutorSettings(executor_name, ray_address, concurrency if "concurrency" in given else None),
        retry_errors=retry_errors,
        typed=frozenset(given),
    )
    try:
        finished = run_suite(settings, load_settings, err_console, preload="evalkit.scoring.run_scores")
    except RunInterrupted as stop:
        raise _interrupted(stop.backend, stop.what) from None
    summary = _score_and_show(
        finished.store, finished.tasks, finished.scoring, finished.reviewer, finished.title, finished.workspace,
        backend_name,
    )  # fmt: skip
    if baseline_dir is not None:
        from evalkit.report.compare.command import compare_command

        code = compare_command(baseline_dir, finished.store.dir, console=console)  # the default max drop and alpha
        if code:
            raise typer.Exit(code)
    if summary.errors:
        raise typer.Exit(EXIT_ERRORS)


def _score_and_show(
    store: RunStore,
    tasks: dict[str, Task],
    settings: ScoringSettings,
    reviewer: ReviewerChoice | None,
    title: str,
    workspace: WorkspaceSource | None = None,
    backend_name: str = DEFAULT_BACKEND,
) -> RunSummary:
    from evalkit.runs.display import cutoff_lines, errors_line, skipped_tasks_lines, summary_table
    from evalkit.runs.paths import RESULTS, SCORES, SUMMARY, TRAJECTORIES
    from evalkit.scoring.run_scores import score_run

    warn = lambda message: err_console.print(f"[yellow]warning[/] {escape(message)}", soft_wrap=True)  # noqa: E731
    from evalkit.cli.review_setup import find_calibration, open_review

    manifest = store.read_manifest()
    suite = manifest.suite if manifest else ""
    calibration = lambda reviewer, mode: find_calibration(suite, reviewer, mode)  # noqa: E731
    run_id = f"{store.dir.name}-review"
    with open_review(reviewer, settings.prices, run_id, backend_name) as review, err_console.status("scoring"):
        summary = score_run(store, tasks, settings, review, warn, workspace, calibration).summary
    console.print(summary_table(summary.models, title))
    written = summary.model_dump(mode="json")  # as summary.json holds it
    for line in cutoff_lines(written):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    for line in skipped_tasks_lines(written):
        console.print(line, style="yellow", markup=False, highlight=False, soft_wrap=True)
    console.print(f"run folder: {store.dir} ({RESULTS}, {SCORES}, {SUMMARY}, {TRAJECTORIES}/)")
    if line := errors_line(written, resume_command(store.dir.name, store.dir.parent, "--retry-errors")):
        console.print(f"[red]{escape(line)}[/]", soft_wrap=True, highlight=False)
    return summary


@app.command("score")
def score(
    run_dir: Annotated[Path, typer.Argument(help="A run folder, or the id of a run in reports/runs.")],
    suite: Annotated[Path | None, typer.Option(help="The run's suite, if it moved.")] = None,
    config: Annotated[
        Path | None, typer.Option(help="Scoring weights, penalties, prices (default ./evalkit.toml).")
    ] = None,
    reviewer: Annotated[
        str | None,
        typer.Option(
            "--reviewer",
            "--judge",
            help="Reviewer grading each change beside the axes: a model, or scripted-reviewer (built in).",
        ),
    ] = None,
    reviewer_mode: Annotated[
        str, typer.Option(help="agentic (reads the trees in a read-only sandbox) or no-tools (one request).")
    ] = "agentic",
    max_review_turns: Annotated[int, typer.Option(min=1, help="Requests per agentic review.")] = 12,
    backend_name: BackendOption = DEFAULT_BACKEND,
) -> None:
    """Re-score a finished run (new weights, prices, penalties or a reviewer) without re-running agents."""
    from evalkit.models.endpoint import DEFAULT_CONFIG, load_config, models_table
    from evalkit.review.endpoint import choose_reviewer
    from evalkit.runs.store import RunStore
    from evalkit.scoring.attempt_scores import load_settings
    from evalkit.scoring.run_scores import run_tasks

    run_dir = run_folder(run_dir)
    store = RunStore(run_dir)
    store.paths.require_results(run_dir)
    config_data = load_config(config)
    config_path = config or DEFAULT_CONFIG
    settings = load_settings(config_data, config_path)
    choice = (
        choose_reviewer(reviewer, models_table(config_data, config_path), config_path, reviewer_mode, max_review_turns)
        if reviewer
        else None
    )
    title = f"run {run_dir.name} (re-scored)"
    _score_and_show(store, run_tasks(store, suite), settings, choice, title, backend_name=backend_name)


@app.command("serve")
def serve(
    policy: Annotated[str, typer.Option(help="oracle, null or replay.")] = "oracle",
    suite: Annotated[Path | None, typer.Option(help="Suite the oracle knows (oracle only).")] = None,
    trajectory: Annotated[Path | None, typer.Option(help="Trajectory file or folder (replay only).")] = None,
    host: Annotated[str, typer.Option()] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535)] = 8000,
) -> None:
    """Serve a reference policy as an OpenAI-compatible endpoint (/v1/chat/completions, /v1/models)."""
    from evalkit.models.builtin import builtin_policy
    from evalkit.models.server import ModelServer

    tasks = _load(suite, skip_invalid=True, verb="serve").tasks if policy == "oracle" and suite is not None else None
    served = builtin_policy(policy, tasks, trajectory)
    with ModelServer({policy: served}, host=host, port=port) as server:
        console.print(f"serving model `{policy}` at {server.base_url} (Ctrl-C to stop)")
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            console.print("stopped")
