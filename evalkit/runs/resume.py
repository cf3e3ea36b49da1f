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
from dataclasses import dataclass, field, replace
from pathlib import Path

from evalkit.agent.agent_table import DEFAULT_AGENT
from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec, resolve_model
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.store import RunManifest, RunOptions
from evalkit.runs.user_setup import DEFAULT_USER_MODEL
from evalkit.sandbox.backend_table import DEFAULT_BACKEND

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


@dataclass(frozen=True)
class RunArgs:
    """What one `evalkit run` runs; `recorded` holds the specs of models resumed as run.json has them."""

    suite: Path
    models: list[str]
    samples: int
    task_ids: list[str] | None
    limit: int | None
    overrides: LimitOverrides
    config: Path | None
    skip_invalid: bool = False
    strict_env: bool = False
    retry_errors: bool = False  # not recorded: each session says whether to run errored attempts again
    recorded: dict[str, ModelSpec] = field(default_factory=dict)
    manifest: RunManifest | None = None
    agent: str = DEFAULT_AGENT
    backend: str = DEFAULT_BACKEND  # may change between sessions of a run (the attempts do not depend on it)
    executor: str = DEFAULT_EXECUTOR  # likewise: a run started on a cluster may finish on this machine
    ray_address: str | None = None
    registry: str | None = None
    user: str = "none"  # --user: a run's user is part of its experiment (a resume keeps it)
    user_model: str = DEFAULT_USER_MODEL


def option(name: str) -> str:
    return "--" + name.replace("_", "-")


def resume_args(asked: RunArgs, given: set[str], manifest: RunManifest | None, run_dir: Path) -> RunArgs:
    """`asked` (the command line; `given` names the options typed) completed from `manifest`, the
    run.json in `run_dir` (None: a new run). Raises EvalkitError, naming the option, when they disagree."""
    if manifest is None:
        if asked.models:
            return asked
        if "run_id" in given:
            raise EvalkitError(f"--run-id {run_dir.name}: no run to resume in {run_dir}; name a --model to start it")
        raise EvalkitError("--model: name a model to run (or give the --run-id of an existing run to resume it)")
    run = f"run `{manifest.run_id}`"
    if "suite" in given:
        suite = asked.suite
    else:
        suite = Path(manifest.suite_path)
        if not suite.exists():
            raise EvalkitError(f"{run}: its suite {suite} is gone; give --suite with where it is now")
    unknown = [m for m in asked.models if m not in manifest.models]
    if unknown:
        raise EvalkitError(
            f"--model {unknown[0]}: {run} has {', '.join(manifest.models)}; name those (or none, to resume them all)"
            ", or use another --run-id"
        )
    recorded = {}
    if not asked.models:
        if typed := [name for name in MODEL_OPTIONS if name in given]:
            raise EvalkitError(
                f"{option(typed[0])}: {run} is resumed with its models as recorded; give --model too to set them again"
            )
        recorded = {name: recorded_spec(name, public, run) for name, public in manifest.models.items()}
    if "agent" in given and asked.agent != manifest.options.agent:
        was = manifest.options.agent
        raise EvalkitError(f"--agent {asked.agent}: {run} ran with agent {was}; use another --run-id")
    for name in ("user", "user_model"):
        if name in given and getattr(asked, name) != getattr(manifest.options, name):
            was = getattr(manifest.options, name)
            raise EvalkitError(f"{option(name)} {getattr(asked, name)}: {run} ran with {was}; use another --run-id")
    given_budgets = {k: v for k, v in vars(asked.overrides).items() if v is not None}
    budgets = dict(manifest.options.limits) if "options" in manifest.model_fields_set else given_budgets
    for name, value in given_budgets.items():
        if value != budgets.get(name):
            was = budgets.get(name, "the tasks' own")
            raise EvalkitError(f"{BUDGET_OPTIONS[name]} {value}: {run} ran with {was}; use another --run-id")
    return replace(
        asked,
        suite=suite,
        models=asked.models or list(manifest.models),
        samples=asked.samples if "samples" in given else manifest.samples,
        task_ids=asked.task_ids if {"task", "limit"} & given else manifest.options.task_ids,
        limit=asked.limit if {"task", "limit"} & given else None,
        overrides=LimitOverrides(**budgets),
        config=asked.config or (Path(manifest.options.config) if manifest.options.config else None),
        # a run that skipped tasks was started with --skip-invalid (run.json from before options recorded it)
        skip_invalid=asked.skip_invalid or manifest.options.skip_invalid or bool(manifest.skipped_tasks),
        strict_env=asked.strict_env or manifest.options.strict_env,
        recorded=recorded,
        manifest=manifest,
        agent=manifest.options.agent,
        user=manifest.options.user,
        user_model=manifest.options.user_model,
        backend=asked.backend if "backend_name" in given else manifest.options.backend,
        executor=asked.executor if "executor_name" in given else manifest.options.executor,
        ray_address=asked.ray_address if {"executor_name", "ray_address"} & given else manifest.options.ray_address,
        registry=asked.registry if {"executor_name", "registry"} & given else manifest.options.registry,
    )


def recorded_spec(name: str, public: dict, run: str) -> ModelSpec:
    """A model as run.json recorded it (its endpoint as it was resolved then)."""
    if public.get("builtin"):
        return resolve_model(name, {})
    try:
        return ModelSpec.model_validate(public)
    except ValueError:
        raise EvalkitError(f"{run}: run.json does not describe model `{name}` fully; give --model to resume") from None


def model_specs(args: RunArgs, resolve: Callable[[str], ModelSpec]) -> list[ModelSpec]:
    """The specs to run: as recorded, or resolved from the options and the config, in which case a
    model the run already has must not have changed but for its transport settings (and, with
    --retry-errors, its endpoint: run.json then records where it moved)."""
    specs = []
    for name in args.models:
        if name in args.recorded:
            specs.append(args.recorded[name])
            continue
        spec = resolve(name)
        if args.manifest is not None and name in args.manifest.models:
            free = TRANSPORT_FIELDS | DESCRIPTIVE_FIELDS | (ENDPOINT_FIELDS if args.retry_errors else frozenset())
            _check_unchanged(spec, args.manifest.models[name], args.manifest.run_id, free)
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


def run_options(args: RunArgs, selected_ids: list[str]) -> RunOptions:
    """What run.json records for `evalkit run --run-id X` alone to run again."""
    limits = {k: v for k, v in vars(args.overrides).items() if v is not None}
    chosen = selected_ids if args.task_ids or args.limit else None
    config = str(args.config) if args.config else None
    return RunOptions(
        task_ids=chosen,
        limits=limits,
        config=config,
        skip_invalid=args.skip_invalid,
        strict_env=args.strict_env,
        agent=args.agent,
        backend=args.backend,
        executor=args.executor,
        ray_address=args.ray_address,
        registry=args.registry,
        user=args.user,
        user_model=args.user_model,
    )
