"""Resuming a run by its id: what `evalkit run --run-id X` runs when options are left out.

`run.json` records what a run was asked: the suite, each model as resolved (endpoint, sampling,
knobs; never a key), the samples, the tasks chosen, the budget overrides and --skip-invalid. A run
id alone runs all of that again (finished attempts are kept; with --retry-errors the errored ones
are run again too). Options given with an existing run id extend it (more samples, more tasks) or
must agree with the record: another suite, a model the run does not have, other settings for one
of its models or other budgets would mix two experiments under one id, and are refused in one
line naming the option.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import replace
from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec, resolve_model
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.settings import RunSettings
from evalkit.runs.store import RunManifest, RunOptions
from evalkit.runs.user_setup import UserSetup

# `evalkit run` options (parameter names) that shape a model's spec.
MODEL_OPTIONS = (
    "base_url", "api_key_env", "temperature", "top_p", "max_completion_tokens", "seed", "request_timeout",
    "max_retries", "tool_choice", "parallel_tool_calls", "reasoning_effort", "reasoning", "stop", "stream",
    "max_connections",
)  # fmt: skip
# Spec fields that change how requests travel, not what a model answers: free to change on resume.
TRANSPORT_FIELDS = frozenset({"request_timeout_s", "max_retries", "retry_base_s", "max_connections", "stream"})
# What is known about a model, not how it is asked: free to change on resume (a cutoff learned later).
DESCRIPTIVE_FIELDS = frozenset({"knowledge_cutoff"})
# Where a model is served: free to change with --retry-errors, whose errors moving the endpoint may cure.
ENDPOINT_FIELDS = frozenset({"base_url", "api_key_env", "extra_headers"})
BUDGET_OPTIONS = {"max_turns": "--max-turns", "max_tokens": "--max-tokens",
                  "wall_time_s": "--wall-time", "command_timeout_s": "--command-timeout"}  # fmt: skip


def option(name: str) -> str:
    return "--" + name.replace("_", "-")


def resume_args(asked: RunSettings, given: set[str], manifest: RunManifest | None, run_dir: Path) -> RunSettings:
    """`asked` (the command line; `given` names the options typed) completed from `manifest`, the
    run.json in `run_dir` (None: a new run). Raises EvalkitError, naming the option, when they disagree."""
    models, tasks, attempt = asked.models, asked.tasks, asked.attempt
    if manifest is None:
        if models.names:
            return asked
        if "run_id" in given:
            raise EvalkitError(f"--run-id {run_dir.name}: no run to resume in {run_dir}; name a --model to start it")
        raise EvalkitError("--model: name a model to run (or give the --run-id of an existing run to resume it)")
    run = f"run `{manifest.run_id}`"
    if "suite" in given:
        suite = tasks.suite
    else:
        suite = Path(manifest.suite_path)
        if not suite.exists():
            raise EvalkitError(f"{run}: its suite {suite} is gone; give --suite with where it is now")
    unknown = [m for m in models.names if m not in manifest.models]
    if unknown:
        raise EvalkitError(
            f"--model {unknown[0]}: {run} has {', '.join(manifest.models)}; name those (or none, to resume them all)"
            ", or use another --run-id"
        )
    recorded = {}
    if not models.names:
        if typed := [name for name in MODEL_OPTIONS if name in given]:
            raise EvalkitError(
                f"{option(typed[0])}: {run} is resumed with its models as recorded; give --model too to set them again"
            )
        recorded = {name: recorded_spec(name, public, run) for name, public in manifest.models.items()}
    if "agent" in given and attempt.agent != manifest.options.agent:
        was = manifest.options.agent
        raise EvalkitError(f"--agent {attempt.agent}: {run} ran with agent {was}; use another --run-id")
    for name, value in (("user", attempt.user.mode), ("user_model", attempt.user.model)):
        if name in given and value != getattr(manifest.options, name):
            was = getattr(manifest.options, name)
            raise EvalkitError(f"{option(name)} {value}: {run} ran with {was}; use another --run-id")
    given_budgets = {k: v for k, v in vars(attempt.limits).items() if v is not None}
    budgets = dict(manifest.options.limits) if "options" in manifest.model_fields_set else given_budgets
    for name, value in given_budgets.items():
        if value != budgets.get(name):
            was = budgets.get(name, "the tasks' own")
            raise EvalkitError(f"{BUDGET_OPTIONS[name]} {value}: {run} ran with {was}; use another --run-id")
    chosen = {"task", "limit"} & given
    sandbox, executor = asked.sandbox, asked.executor
    return replace(
        asked,
        tasks=replace(
            tasks,
            suite=suite,
            samples=tasks.samples if "samples" in given else manifest.samples,
            task_ids=tasks.task_ids if chosen else manifest.options.task_ids,
            limit=tasks.limit if chosen else None,
            # a run that skipped tasks was started with --skip-invalid (run.json from before options recorded it)
            skip_invalid=tasks.skip_invalid or manifest.options.skip_invalid or bool(manifest.skipped_tasks),
            strict_env=tasks.strict_env or manifest.options.strict_env,
        ),
        models=replace(
            models,
            names=models.names or list(manifest.models),
            config=models.config or (Path(manifest.options.config) if manifest.options.config else None),
            recorded=recorded,
        ),
        attempt=replace(
            attempt,
            agent=manifest.options.agent,
            limits=LimitOverrides(**budgets),
            user=UserSetup(manifest.options.user, manifest.options.user_model),  # type: ignore[arg-type]
        ),
        sandbox=replace(
            sandbox,
            backend=sandbox.backend if "backend_name" in given else manifest.options.backend,
            registry=sandbox.registry if {"executor_name", "registry"} & given else manifest.options.registry,
        ),
        executor=replace(
            executor,
            name=executor.name if "executor_name" in given else manifest.options.executor,
            ray_address=(
                executor.ray_address if {"executor_name", "ray_address"} & given else manifest.options.ray_address
            ),
        ),
    )


def recorded_spec(name: str, public: dict, run: str) -> ModelSpec:
    """A model as run.json recorded it (its endpoint as it was resolved then)."""
    if public.get("builtin"):
        return resolve_model(name, {})
    try:
        return ModelSpec.model_validate(public)
    except ValueError:
        raise EvalkitError(f"{run}: run.json does not describe model `{name}` fully; give --model to resume") from None


def model_specs(
    settings: RunSettings, manifest: RunManifest | None, resolve: Callable[[str], ModelSpec]
) -> list[ModelSpec]:
    """The specs to run: as recorded, or resolved from the options and the config, in which case a
    model the run (`manifest`: its run.json) already has must not have changed but for its
    transport settings (and, with --retry-errors, its endpoint: run.json then records where it moved)."""
    specs = []
    for name in settings.models.names:
        if name in settings.models.recorded:
            specs.append(settings.models.recorded[name])
            continue
        spec = resolve(name)
        if manifest is not None and name in manifest.models:
            free = TRANSPORT_FIELDS | DESCRIPTIVE_FIELDS | (ENDPOINT_FIELDS if settings.retry_errors else frozenset())
            _check_unchanged(spec, manifest.models[name], manifest.run_id, free)
        specs.append(spec)
    return specs


def _flat(public: dict, free: frozenset[str]) -> dict:
    flat = {k: v for k, v in public.items() if k != "sampling" and k not in free}
    flat.update({k: v for k, v in public.get("sampling", {}).items()})
    return flat


def _check_unchanged(spec: ModelSpec, recorded: dict, run_id: str, free: frozenset[str]) -> None:
    with suppress(ValueError):  # through the model: fields added to ModelSpec since the run compare as defaults
        recorded = ModelSpec.model_validate(recorded).public()
    now, then = _flat(spec.public(), free), _flat(recorded, free)
    for key in sorted(now.keys() | then.keys()):
        if now.get(key) != then.get(key):
            hint = " (with --retry-errors the endpoint may move)" if key in ENDPOINT_FIELDS else ""
            raise EvalkitError(
                f"--model {spec.name}: `{key}` is {now.get(key)!r} now, {then.get(key)!r} in run `{run_id}`; "
                f"resume with the same settings{hint}, or use another --run-id"
            )


def run_options(settings: RunSettings, selected_ids: list[str]) -> RunOptions:
    """What run.json records for `evalkit run --run-id X` alone to run again."""
    tasks, attempt = settings.tasks, settings.attempt
    limits = {k: v for k, v in vars(attempt.limits).items() if v is not None}
    chosen = selected_ids if tasks.task_ids or tasks.limit else None
    config = str(settings.models.config) if settings.models.config else None
    return RunOptions(
        task_ids=chosen,
        limits=limits,
        config=config,
        skip_invalid=tasks.skip_invalid,
        strict_env=tasks.strict_env,
        agent=attempt.agent,
        backend=settings.sandbox.backend,
        executor=settings.executor.name,
        ray_address=settings.executor.ray_address,
        registry=settings.sandbox.registry,
        user=attempt.user.mode,
        user_model=attempt.user.model,
    )
