"""`evalkit run`'s work, from its `RunSettings`: resume what run.json records, load and choose the
tasks, resolve the models (each key checked, each endpoint asked once), then open the run folder,
plan the attempts not yet finished and run them on the executor (orchestrate.execute) with a live
display. What could stop the run (a bad option, a missing key, a dead endpoint, Ray missing) stops
it before its folder is written.

Scoring and comparing are the layers above (evalkit.scoring, evalkit.report), never imported here:
the command hands in how the config's [scoring] table is read (its integrity policy decides each
attempt's `resolved`, so a bad table stops the run first) and scores the `FinishedRun` this returns."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from importlib import import_module
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from rich.console import Console
from rich.markup import escape

from evalkit.errors import EvalkitError
from evalkit.integrity import IntegrityPolicy
from evalkit.models.backoff import EndpointStates
from evalkit.models.endpoint import DEFAULT_CONFIG, ModelSpec, load_config, models_table, resolve_model
from evalkit.review.endpoint import ReviewerChoice, choose_reviewer
from evalkit.runs.command_setup import driver_backend, load_reported, strict_env_kept
from evalkit.runs.display import RunDisplay
from evalkit.runs.executor import check_registry_use, concurrency_for
from evalkit.runs.executor_table import open_executor
from evalkit.runs.folders import resume_command
from evalkit.runs.orchestrate import execute, open_run, plan_attempts
from evalkit.runs.resume import model_specs, resume_args, run_options
from evalkit.runs.settings import DEFAULT_CONCURRENCY, RunSettings
from evalkit.runs.store import RunStore
from evalkit.runs.user_setup import DEFAULT_USER_MODEL, UserSetup
from evalkit.sandbox.protocol import SandboxBackend, engine_of
from evalkit.sandbox.workspace import WorkspaceSource
from evalkit.tasks import Task
from evalkit.wording import counted


class ScoringChoice(Protocol):
    """What a run needs of the scoring layer's settings: the integrity policy that decides `resolved`."""

    @property
    def integrity(self) -> IntegrityPolicy: ...


S = TypeVar("S", bound=ScoringChoice)


@dataclass(frozen=True)
class FinishedRun(Generic[S]):
    """What the layers above need to score a run whose attempts are done."""

    store: RunStore
    tasks: dict[str, Task]  # the suite's tasks by id
    scoring: S  # as the command's loader read the config's [scoring] table
    reviewer: ReviewerChoice | None  # reviews each change after the attempts (evalkit/review/)
    title: str  # "run ID on SUITE"
    workspace: WorkspaceSource  # the workspaces the backend built for the run


class RunInterrupted(Exception):
    """Ctrl-C (or SIGTERM) while the attempts ran: `backend` (closed) and what to tell the user."""

    def __init__(self, backend: SandboxBackend, what: str) -> None:
        super().__init__(what)
        self.backend, self.what = backend, what


def run_suite(
    asked: RunSettings, scoring_settings: Callable[[dict, Path], S], err: Console, preload: str | None = None
) -> FinishedRun[S]:
    """Run the attempts `asked` says (lines and the live display on `err`); raises EvalkitError
    (one line) for what the user can fix, RunInterrupted on Ctrl-C. `preload`: a module the caller
    needs once the attempts end (scoring), imported in the background while they run."""
    if asked.retry_errors:
        check_retry(asked)
    run_id = asked.run_id
    store = RunStore(asked.out / run_id)
    manifest = store.read_manifest()
    settings = resume_args(asked, set(asked.typed), manifest, store.dir)
    tasks, models = settings.tasks, settings.models
    loaded = load_reported(tasks.suite, tasks.skip_invalid, "run", err)
    selected = loaded.select(tasks.task_ids)[: tasks.limit] if tasks.limit else loaded.select(tasks.task_ids)
    selected = strict_env_kept(selected, tasks.strict_env, err)
    config_data = load_config(models.config)
    config_path = models.config or DEFAULT_CONFIG
    models_config = models_table(config_data, config_path)
    scoring = scoring_settings(config_data, config_path)
    reviewer = (
        choose_reviewer(models.reviewer, models_config, config_path, models.reviewer_mode)
        if models.reviewer
        else None
    )

    def resolved(name: str) -> ModelSpec:
        spec = resolve_model(
            name,
            models_config,
            base_url=models.base_url,
            api_key_env=models.api_key_env,
            sampling=models.sampling,
            config_path=config_path,
            knobs=models.knobs,
        )
        changes = {"request_timeout_s": models.request_timeout_s, "max_retries": models.max_retries}
        return spec.model_copy(update={k: v for k, v in changes.items() if v is not None})

    specs = model_specs(settings, manifest, resolved)
    user = user_setup(settings.attempt.user, selected, resolved)
    for spec in [*specs, *([user.spec] if user.spec else [])]:
        spec.api_key()  # a missing key or header variable stops the run before its folder exists
        spec.header_values()
    check_registry_use(settings.sandbox.registry, settings.executor.name)
    executor = open_executor(settings.executor.name, settings.executor.ray_address)  # Ray missing: one line
    if models.preflight:  # resumed models too: before anything is written
        extra = [s for s in [reviewer and reviewer.spec, user.spec] if s]
        preflight([*specs, *extra], err)
    samples = tasks.samples
    open_run(store, run_id, loaded, tasks.suite, specs, samples, run_options(settings, [t.id for t in selected]))
    names = [s.name for s in specs]
    plan = plan_attempts(selected, names, samples, store.finished_keys(settings.retry_errors))
    skipped = len(selected) * samples * len(names) - len(plan)
    if skipped:
        err.print(f"resuming run {run_id}: {counted(skipped, 'finished attempt')} kept, {len(plan)} to go")
    registry = settings.sandbox.registry
    backend = driver_backend(run_id, settings.sandbox.backend, remote=executor.remote, registry=registry, log=err.print)
    if preload:
        import_in_background(preload)  # pandas and scipy load while the first attempts run
    concurrency = settings.executor.concurrency
    settings = replace(
        settings,
        attempt=replace(settings.attempt, integrity_policy=scoring.integrity, user=user),
        executor=replace(
            settings.executor,
            concurrency=concurrency_for(executor, concurrency or DEFAULT_CONCURRENCY, concurrency is not None),
        ),
    )
    try:
        endpoints = EndpointStates()
        with RunDisplay(err, len(plan), names, endpoints, engine=engine_of(backend)) as display:
            execute(
                plan, specs, loaded.tasks, backend, store, settings,
                on_record=display.add, on_retry=display.retrying, endpoints=endpoints, executor=executor,
            )  # fmt: skip
    except KeyboardInterrupt:
        resume = resume_command(run_id, asked.out, *(["--retry-errors"] if settings.retry_errors else []))
        raise RunInterrupted(backend, f"finished attempts are in {store.results_path}; resume with: {resume}") from None
    finally:
        backend.close()
        executor.close()
    for line in executor.notes():  # a cluster's nodes left out, and why
        err.print(f"[yellow]warning[/] {escape(line)}", soft_wrap=True)
    by_id = {t.id: t for t in loaded.tasks}
    return FinishedRun(store, by_id, scoring, reviewer, f"run {run_id} on {loaded.name}", backend.workspace)


def check_retry(settings: RunSettings) -> None:
    """--retry-errors re-runs attempts of a run that exists; say so before anything is written."""
    if "run_id" not in settings.typed:
        raise EvalkitError("--retry-errors needs --run-id: the run whose errored attempts to run again")
    if RunStore(settings.out / settings.run_id).read_manifest() is None:
        raise EvalkitError(
            f"--retry-errors: no run `{settings.run_id}` in {settings.out}; give the --run-id (and --out) of a run"
        )


def user_setup(asked: UserSetup, tasks: list[Task], resolve: Callable[[str], ModelSpec]) -> UserSetup:
    """Who answers `ask_user` in this run; its model resolved like --model's (None for oracle-user)."""
    if asked.model == DEFAULT_USER_MODEL or not asked.needed(tasks):
        return asked
    spec = resolve(asked.model)
    if spec.builtin:
        raise EvalkitError(f"--user-model {asked.model}: a built-in policy cannot answer; name oracle-user or a model")
    return replace(asked, spec=spec)


def preflight(specs: list[ModelSpec], err: Console) -> None:
    """Each distinct endpoint asked once: a dead one stops the run (exit 2) before its folder exists."""
    from evalkit.models.preflight import preflight as ask_endpoints

    with err.status("checking endpoints"):
        report = ask_endpoints(specs)
    for warning in report.warnings:
        err.print(f"[yellow]warning[/] {escape(warning)}", soft_wrap=True)
    report.raise_first()


def import_in_background(module: str) -> None:
    """Import `module` in a daemon thread, for a command that needs it only at its end (scoring after
    the attempts): its libraries load while the sandboxes work instead of before. Python's import
    lock makes the later real import wait for this one; a failure shows there, not here."""

    def load() -> None:
        with contextlib.suppress(Exception):
            import_module(module)

    threading.Thread(target=load, name=f"import {module}", daemon=True).start()
