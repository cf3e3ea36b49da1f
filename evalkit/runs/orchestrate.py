"""A run: every (task, model, sample) of a plan attempted on a thread pool, each finished attempt
appended to `results.jsonl` at once; attempts already there are skipped, which is how a run
resumes. Built-in models (oracle, null, replay:FILE) are served in-process on 127.0.0.1 and
reached over real HTTP like any other endpoint. An agent whose sandbox reaches only the model
proxy (`command:TEMPLATE`) gets the run's one proxy, started before the first sandbox and closed
with the run.

The Docker engine is watched for the whole run: no attempt starts while it does not answer, and an
attempt whose sandbox went with it is recorded as `sandbox_error` and run again (at most
`ENGINE_RETRIES` times) once it is back; the latest row of an attempt wins. Past the wait bound the
run stops with one line saying how to resume."""

from __future__ import annotations

import json
import secrets
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import replace
from pathlib import Path

from evalkit.agent.agent_table import installed_layer
from evalkit.errors import EvalkitError
from evalkit.files import write_atomic
from evalkit.models.backoff import EndpointStates
from evalkit.models.builtin import builtin_policy
from evalkit.models.client import ChatClient
from evalkit.models.endpoint import ModelSpec
from evalkit.models.policies import Policy
from evalkit.models.server import ModelServer
from evalkit.records import AttemptRecord, StopReason, utc_now
from evalkit.runs.attempt import AttemptKey, AttemptOutcome
from evalkit.runs.attempt_setup import set_up_attempts
from evalkit.runs.executor import Executor, NodeFailure
from evalkit.runs.folders import resume_command
from evalkit.runs.local_executor import LocalExecutor
from evalkit.runs.node_attempt import BuiltinEndpoint, NodeAttempt, NodeJob
from evalkit.runs.settings import DEFAULT_CONCURRENCY, AttemptSettings, RunSettings
from evalkit.runs.store import RunManifest, RunOptions, RunStore
from evalkit.runs.task_payload import TaskPayload, travelling
from evalkit.sandbox.engine_watch import EngineUnavailable
from evalkit.sandbox.pool import POOL_SLACK
from evalkit.sandbox.protocol import DistributesImages, SandboxBackend, engine_of, prepare_ahead, require
from evalkit.tasks import Suite, Task

ENGINE_RETRIES = 2  # runs again of one attempt whose sandbox was lost with the Docker engine


def builtin_policies(specs: list[ModelSpec], tasks: list[Task]) -> dict[str, Policy]:
    """The run's built-in models (oracle, null, replay) by name, for a model server to serve."""
    return {spec.name: builtin_policy(spec.builtin, tasks, spec.replay_path) for spec in specs if spec.builtin}


@contextmanager
def model_clients(
    specs: list[ModelSpec], tasks: list[Task], endpoints: EndpointStates | None = None
) -> Iterator[dict[str, ChatClient]]:
    """A client per model; built-in ones point at an in-process server started for the run.
    `endpoints` is where the clients share connection slots and backoff (a live display reads it)."""
    with ExitStack() as stack:
        builtin = builtin_policies(specs, tasks)
        server = stack.enter_context(ModelServer(builtin)) if builtin else None
        clients = {}
        for spec in specs:
            base_url = server.base_url if spec.builtin and server else None
            clients[spec.name] = ChatClient(spec, base_url=base_url, endpoints=endpoints)
            stack.callback(clients[spec.name].close)
        yield clients


def plan_attempts(
    tasks: list[Task], models: list[str], samples: int, done: set[tuple[str, str, int]]
) -> list[AttemptKey]:
    """Every attempt not yet finished, task by task so that models progress side by side."""
    return [
        AttemptKey(task, model, sample)
        for task in tasks
        for sample in range(samples)
        for model in models
        if (task.id, model, sample) not in done
    ]


def open_run(
    store: RunStore,
    run_id: str,
    suite: Suite,
    suite_path: Path,
    specs: list[ModelSpec],
    samples: int,
    options: RunOptions | None = None,
) -> None:
    """Create or reopen the run folder; refuse to mix suites under one run id. A reopened run keeps
    the union of the tasks chosen each time (None: all) and the largest sample count. The suite's
    tasks that did not load are recorded as they are now (those loaded in an earlier session excepted)."""
    options = options or RunOptions()
    store.open()
    manifest = store.read_manifest()
    now = utc_now()
    models = {spec.name: spec.public() for spec in specs}
    if manifest is None:
        manifest = RunManifest(
            run_id=run_id,
            suite=suite.name,
            suite_path=str(suite_path),
            tasks=[t.id for t in suite.tasks],
            skipped_tasks=suite.skipped,
            models=models,
            samples=samples,
            created_at=now,
            updated_at=now,
            options=options,
        )
    else:
        if manifest.suite != suite.name:
            raise EvalkitError(
                f"--suite {suite_path}: run `{run_id}` is of suite `{manifest.suite}`, not `{suite.name}`; "
                "use another --run-id"
            )
        chosen = manifest.options.task_ids
        if chosen is not None and options.task_ids is not None:
            union = set(chosen) | set(options.task_ids)
            options = options.model_copy(update={"task_ids": [t.id for t in suite.tasks if t.id in union]})
        elif chosen is None and "options" in manifest.model_fields_set:
            options = options.model_copy(update={"task_ids": None})
        tasks = sorted(set(manifest.tasks) | {t.id for t in suite.tasks})
        manifest = manifest.model_copy(
            update={
                "models": {**manifest.models, **models},
                "samples": max(manifest.samples, samples),
                "tasks": tasks,
                "skipped_tasks": [s for s in suite.skipped if s.task not in tasks],
                "updated_at": now,
                "options": options,
            }
        )
    store.write_manifest(manifest)


def error_record(key: AttemptKey, run_id: str, error: BaseException, duration_s: float = 0.0) -> AttemptRecord:
    """The row of an attempt the harness failed (an exception escaped it): a `sandbox_error`."""
    return AttemptRecord(
        run_id=run_id,
        task_id=key.task.id,
        model=key.model,
        sample=key.sample,
        resolved=False,
        stop_reason=StopReason.SANDBOX_ERROR,
        error=(str(error) if isinstance(error, NodeFailure) else f"{type(error).__name__}: {error}")[:500],
        duration_s=round(duration_s, 3),
        finished_at=utc_now(),
    )


def execute(
    plan: list[AttemptKey],
    specs: list[ModelSpec],
    tasks: list[Task],
    backend: SandboxBackend,
    store: RunStore,
    settings: RunSettings,
    *,
    on_record: Callable[[AttemptRecord], None],
    on_retry: Callable[[AttemptRecord], None] | None = None,
    endpoints: EndpointStates | None = None,
    executor: Executor | None = None,
) -> None:
    """Run the plan on `executor` (None: the local thread pool) as `settings` say; each record is
    appended to the store (after its trajectory, when the attempt ran on a cluster node), then
    handed to `on_record` (or, when the attempt will run again because the engine went away under
    it, to `on_retry`). With `settings.sandbox.pool` the backend is told the plan's sandboxes, to
    make `concurrency + POOL_SLACK` of them ahead. With a registry (a cluster run) each task's
    image, and an installed agent's own image, are pushed there for the nodes to pull.
    `endpoints` is where the model clients share connection slots and backoff."""
    runner = executor or LocalExecutor()
    registry = settings.sandbox.registry
    engine_retries: Counter[tuple[str, str, int]] = Counter()

    def finished(key: AttemptKey, outcome: AttemptOutcome) -> bool:
        record = outcome.record
        if outcome.trajectory is not None:  # from a node; row last: a row always has its trajectory
            record = write_node_trajectory(store, record, outcome)
        store.append(record)
        again = outcome.engine_lost and engine_retries[record.key] < ENGINE_RETRIES
        if not again:
            on_record(record)
            return False
        engine_retries[record.key] += 1
        if on_retry is not None:
            on_retry(record)
        return True

    def failed(key: AttemptKey, error: BaseException) -> bool:
        if isinstance(error, EngineUnavailable) or not isinstance(error, Exception):
            raise error
        return finished(key, AttemptOutcome(error_record(key, backend.run_id, error)))

    try:
        if runner.remote:
            job = node_job(specs, settings.sandbox.backend, backend.run_id, settings.attempt)
            layer = installed_layer(settings.attempt.agent)
            if registry is not None and layer is not None:  # built here once, pulled by the nodes
                images = require(backend, DistributesImages, f"--registry {registry}")
                job = replace(job, agent_image=images.publish_layer(layer, registry), registry=registry)
            with served_builtins(specs, tasks, runner.reachable_host()) as builtin:
                payloads: dict[str, TaskPayload] = {}  # one per task, shared by its attempts
                for key in plan:
                    if key.task.id not in payloads:
                        payloads[key.task.id] = travelling(key.task, backend, registry)
                items = [NodeAttempt(payloads[key.task.id], key.model, key.sample) for key in plan]
                runner.run(
                    items,
                    replace(job, builtin=builtin),
                    backend=backend,
                    concurrency=concurrency_of(settings),
                    on_result=lambda item, outcome: finished(item.key, outcome),
                    on_error=lambda item, error: failed(item.key, error),
                )
            return
        run_locally(plan, specs, tasks, backend, store, runner, finished, failed, settings, endpoints)
    except EngineUnavailable as exc:
        raise EvalkitError(
            f"{exc}; finished attempts are in {store.results_path}; "
            f"resume with {resume_command(backend.run_id, store.dir.parent)}"
        ) from None


def write_node_trajectory(store: RunStore, record: AttemptRecord, outcome: AttemptOutcome) -> AttemptRecord:
    """A node's trajectory and the files beside it (an agent's log, its own trajectory) written
    under the name this run gives the attempt's next row; the record, naming it."""
    path = store.trajectory_path(*record.key)
    sent, kept = Path(record.trajectory).name.removesuffix(".jsonl"), path.name.removesuffix(".jsonl")
    for name, content in outcome.beside.items():  # `<sent>.agent.log` is `<kept>.agent.log` here
        write_atomic(path.with_name(kept + Path(name).name.removeprefix(sent)), content)
    trajectory = outcome.trajectory or b""
    if kept != sent:  # the log its `agent_command` event names was renamed too
        trajectory = b"".join(_log_renamed(line, sent, kept) for line in trajectory.splitlines(keepends=True))
    write_atomic(path, trajectory)
    return record.model_copy(update={"trajectory": str(path.relative_to(store.dir))})


def _log_renamed(line: bytes, sent: str, kept: str) -> bytes:
    if b'"agent_command"' not in line:
        return line
    event = json.loads(line)
    if event.get("type") != "agent_command" or not isinstance(event.get("log"), str):
        return line
    return (json.dumps({**event, "log": kept + event["log"].removeprefix(sent)}, default=str) + "\n").encode()


def node_job(specs: list[ModelSpec], backend_name: str, run_id: str, settings: AttemptSettings) -> NodeJob:
    """What every attempt on a cluster node shares: the run's settings, by value, without keys."""
    return NodeJob(run_id=run_id, backend=backend_name, specs={spec.name: spec for spec in specs}, settings=settings)


@contextmanager
def served_builtins(specs: list[ModelSpec], tasks: list[Task], host: str) -> Iterator[BuiltinEndpoint | None]:
    """The built-in models (oracle, null, replay) served for a cluster's workers: bound on every
    interface of the driver, reached at `host` (the driver's address as the cluster sees it), and
    only with the run's token (a sandbox allowed the network must not fetch the oracle's answers)."""
    builtin = builtin_policies(specs, tasks)
    if not builtin:
        yield None
        return
    token = secrets.token_urlsafe(24)
    with ModelServer(builtin, host="0.0.0.0", token=token, advertised=host) as server:
        yield BuiltinEndpoint(server.base_url, token)


def concurrency_of(settings: RunSettings) -> int:
    """Attempts at once: as the settings say, else DEFAULT_CONCURRENCY."""
    return settings.executor.concurrency or DEFAULT_CONCURRENCY


def run_locally(
    plan: list[AttemptKey],
    specs: list[ModelSpec],
    tasks: list[Task],
    backend: SandboxBackend,
    store: RunStore,
    runner: Executor,
    finished: Callable[[AttemptKey, AttemptOutcome], bool],
    failed: Callable[[AttemptKey, BaseException], bool],
    settings: RunSettings,
    endpoints: EndpointStates | None = None,
) -> None:
    """The plan's attempts on this machine's engine: one model client per model and one model
    proxy for the run, shared by the attempts of `runner`'s threads (runs/attempt_setup.py)."""
    engine = engine_of(backend)
    concurrency = concurrency_of(settings)
    with (
        model_clients(specs, tasks, endpoints) as clients,
        engine.watching(settings.sandbox.engine_wait_s),
        set_up_attempts(
            settings.attempt, backend.run_id, backend, store, specs, clients, [key.task for key in plan]
        ) as attempts,
    ):

        def job(key: AttemptKey) -> AttemptOutcome:
            engine.ready()  # waits while the engine does not answer; EngineUnavailable past the bound
            outages, started = engine.outages, time.monotonic()
            try:
                record = attempts.run(key)
            except Exception as exc:
                record = error_record(key, backend.run_id, exc, time.monotonic() - started)
                return AttemptOutcome(record, engine.lost_since(outages, exc))
            return AttemptOutcome(record, record.stop_reason == StopReason.SANDBOX_ERROR and engine.lost_since(outages))

        if settings.sandbox.pool:
            prepare_ahead(backend, [attempts.sandboxes(key) for key in plan], capacity=concurrency + POOL_SLACK)
        runner.run(plan, job, backend=backend, concurrency=concurrency, on_result=finished, on_error=failed)
