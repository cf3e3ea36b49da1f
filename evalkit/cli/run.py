"""`evalkit run`, `score` and `serve`: run agents on a suite, (re-)score runs, serve reference policies."""

from __future__ import annotations

import time
from collections.abc import Callable
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
    _open_backend,
    _strict_env,
    app,
    check_registry_use,
    concurrency_for,
    console,
    err_console,
    given_options,
    import_in_background,
    new_run_id,
    run_id_option,
)
from evalkit.errors import EvalkitError
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.runs.folders import RUNS_ROOT, resume_command, run_folder
from evalkit.wording import counted

if TYPE_CHECKING:  # the rest is imported by the commands that use it: `evalkit --help` stays fast
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import ModelSpec
    from evalkit.runs.store import RunStore
    from evalkit.runs.user_setup import UserSetup
    from evalkit.scoring.attempt_scores import ScoringSettings
    from evalkit.scoring.run_scores import WorkspaceSource
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
    judge: Annotated[str | None, typer.Option(help="Reviewer model grading each diff (recorded apart).")] = None,
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
    from evalkit.models.backoff import EndpointStates
    from evalkit.models.endpoint import DEFAULT_CONFIG, Sampling, load_config, models_table, resolve_model
    from evalkit.runs.display import RunDisplay
    from evalkit.runs.executor_table import open_executor
    from evalkit.runs.limits import LimitOverrides
    from evalkit.runs.orchestrate import execute, open_run, plan_attempts
    from evalkit.runs.resume import RunArgs, model_specs, resume_args, run_options
    from evalkit.runs.store import RunStore
    from evalkit.runs.user_setup import check_user_mode
    from evalkit.sandbox.protocol import DEFAULT_OUTPUT_LIMIT, engine_of
    from evalkit.scoring.attempt_scores import load_settings

    baseline_dir = run_folder(baseline, out) if baseline is not None else None
    if retry_errors:
        _check_retry(run_id, out)
    run_id = run_id or new_run_id()
    store = RunStore(out / run_id)
    asked = RunArgs(
        suite, list(dict.fromkeys(model or [])), samples, task, limit,
        LimitOverrides(max_turns, max_tokens, wall_time, command_timeout), config, skip_invalid, strict_env,
        retry_errors, agent=check_agent(agent), backend=backend_name, executor=executor_name, ray_address=ray_address,
        registry=registry, user=check_user_mode(user), user_model=user_model,
    )  # fmt: skip
    args = resume_args(asked, given_options(ctx), store.read_manifest(), store.dir)
    suite, samples, config = args.suite, args.samples, args.config
    loaded = _load(suite, args.skip_invalid, "run")
    selected = loaded.select(args.task_ids)[: args.limit] if args.limit else loaded.select(args.task_ids)
    selected = _strict_env(selected, args.strict_env)
    sampling = Sampling(temperature=temperature, top_p=top_p, max_tokens=max_completion_tokens, seed=seed)
    config_data = load_config(config)
    config_path = config or DEFAULT_CONFIG
    models_config = models_table(config_data, config_path)
    settings = load_settings(config_data, config_path)
    judge_client = _judge_client(judge, models_config, config_path)
    knobs = {
        "tool_choice": tool_choice,
        "parallel_tool_calls": parallel_tool_calls,
        "reasoning_effort": reasoning_effort,
        "reasoning": reasoning,
        "stop": stop or None,
        "stream": stream,
        "max_connections": max_connections,
    }

    def resolved(name: str) -> ModelSpec:
        spec = resolve_model(
            name,
            models_config,
            base_url=base_url,
            api_key_env=api_key_env,
            sampling=sampling,
            config_path=config or DEFAULT_CONFIG,
            knobs=knobs,
        )
        changes = {"request_timeout_s": request_timeout, "max_retries": max_retries}
        return spec.model_copy(update={k: v for k, v in changes.items() if v is not None})

    specs = model_specs(args, resolved)
    user_setup = _user_setup(args.user, args.user_model, selected, resolved)
    for spec in [*specs, *([user_setup.spec] if user_setup.spec else [])]:
        spec.api_key()  # a missing key or header variable stops the run before its folder exists
        spec.header_values()
    check_registry_use(args.registry, args.executor)
    executor = open_executor(args.executor, args.ray_address)  # Ray missing: one line before anything is written
    if check_endpoints:  # resumed models too: before anything is written
        extra = [c.spec for c in [judge_client] if c] + [s for s in [user_setup.spec] if s]
        _preflight([*specs, *extra])
    open_run(store, run_id, loaded, suite, specs, samples, run_options(args, [t.id for t in selected]))
    names = [s.name for s in specs]
    plan = plan_attempts(selected, names, samples, store.finished_keys(retry_errors))
    skipped = len(selected) * samples * len(names) - len(plan)
    if skipped:
        err_console.print(f"resuming run {run_id}: {counted(skipped, 'finished attempt')} kept, {len(plan)} to go")
    overrides = args.overrides
    backend = _open_backend(run_id, args.backend, remote=executor.remote, registry=args.registry)
    import_in_background("evalkit.scoring.run_scores")  # pandas and scipy load while the first attempts run
    try:
        endpoints = EndpointStates()
        with RunDisplay(err_console, len(plan), names, endpoints, engine=engine_of(backend)) as display:
            execute(
                plan,
                specs,
                loaded.tasks,
                backend,
                store,
                concurrency=concurrency_for(executor, concurrency, "concurrency" in given_options(ctx)),
                overrides=overrides,
                output_limit=DEFAULT_OUTPUT_LIMIT,
                on_record=display.add,
                integrity_policy=settings.integrity,
                endpoints=endpoints,
                engine_wait_s=engine_wait,
                on_retry=display.retrying,
                agent=args.agent,
                pool=pool,
                executor=executor,
                backend_name=args.backend,
                registry=args.registry,
                user=user_setup,
            )
    except KeyboardInterrupt:
        resume = resume_command(run_id, out, *(["--retry-errors"] if retry_errors else []))
        raise _interrupted(backend, f"finished attempts are in {store.results_path}; resume with: {resume}") from None
    finally:
        backend.close()
        executor.close()
    for line in executor.notes():  # a cluster's nodes left out, and why
        err_console.print(f"[yellow]warning[/] {escape(line)}", soft_wrap=True)
    summary = _score_and_show(
        store,
        {t.id: t for t in loaded.tasks},
        settings,
        judge_client,
        f"run {run_id} on {loaded.name}",
        workspace=backend.workspace,  # the workspaces the backend built for the run
    )
    if baseline_dir is not None:
        from evalkit.report.compare.command import compare_command

        code = compare_command(baseline_dir, store.dir, console=console)  # the default max drop and alpha
        if code:
            raise typer.Exit(code)
    if summary.errors:
        raise typer.Exit(EXIT_ERRORS)


def _check_retry(run_id: str | None, out: Path) -> None:
    """--retry-errors re-runs attempts of a run that exists; say so before anything is written."""
    from evalkit.runs.store import RunStore

    if run_id is None:
        raise EvalkitError("--retry-errors needs --run-id: the run whose errored attempts to run again")
    if RunStore(out / run_id).read_manifest() is None:
        raise EvalkitError(f"--retry-errors: no run `{run_id}` in {out}; give the --run-id (and --out) of a run")


def _user_setup(mode: str, model: str, tasks: list[Task], resolve: Callable[[str], ModelSpec]) -> UserSetup:
    """Who answers `ask_user` in this run; its model resolved like --model's (None for oracle-user)."""
    from evalkit.runs.user_setup import DEFAULT_USER_MODEL, UserSetup

    setup = UserSetup(mode, model)  # type: ignore[arg-type]  # checked by check_user_mode
    if model == DEFAULT_USER_MODEL or not setup.needed(tasks):
        return setup
    spec = resolve(model)
    if spec.builtin:
        raise EvalkitError(f"--user-model {model}: a built-in policy cannot answer; name oracle-user or a model")
    return UserSetup(mode, model, spec)  # type: ignore[arg-type]


def _preflight(specs: list[ModelSpec]) -> None:
    """Each distinct endpoint asked once: a dead one stops the run (exit 2) before its folder exists."""
    from evalkit.models.preflight import preflight

    with err_console.status("checking endpoints"):
        report = preflight(specs)
    for warning in report.warnings:
        err_console.print(f"[yellow]warning[/] {escape(warning)}", soft_wrap=True)
    report.raise_first()


def _judge_client(name: str | None, models_config: dict, config_path: Path) -> ChatClient | None:
    from evalkit.models.client import ChatClient
    from evalkit.models.endpoint import resolve_model

    if name is None:
        return None
    spec = resolve_model(name, models_config, config_path=config_path)
    if spec.builtin:
        raise EvalkitError(f"--judge {name}: a built-in policy cannot review code; name a real model")
    return ChatClient(spec)


def _score_and_show(
    store: RunStore,
    tasks: dict[str, Task],
    settings: ScoringSettings,
    judge: ChatClient | None,
    title: str,
    workspace: WorkspaceSource | None = None,
) -> RunSummary:
    from evalkit.runs.display import cutoff_lines, errors_line, skipped_tasks_lines, summary_table
    from evalkit.runs.paths import RESULTS, SCORES, SUMMARY, TRAJECTORIES
    from evalkit.scoring.run_scores import score_run

    warn = lambda message: err_console.print(f"[yellow]warning[/] {escape(message)}", soft_wrap=True)  # noqa: E731
    with err_console.status("scoring"):
        summary = score_run(store, tasks, settings, judge, warn, workspace).summary
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
    judge: Annotated[str | None, typer.Option(help="Reviewer model grading each diff (recorded apart).")] = None,
) -> None:
    """Re-score a finished run (new weights, prices, penalties or a judge) without re-running agents."""
    from evalkit.models.endpoint import DEFAULT_CONFIG, load_config, models_table
    from evalkit.runs.store import RunStore
    from evalkit.scoring.attempt_scores import load_settings
    from evalkit.scoring.run_scores import run_tasks

    run_dir = run_folder(run_dir)
    store = RunStore(run_dir)
    store.paths.require_results(run_dir)
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
