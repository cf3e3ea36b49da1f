"""A run's settings, one record: what `evalkit run` was told, grouped by what each part decides.

The command line fills a `RunSettings` from its options; the runs layer completes it (a resumed
run's record from run.json, runs/resume.py; the integrity policy from the config; the user model's
endpoint; the concurrency from the executor) and hands it on: `run_suite` → `execute` →
`run_locally`, or, for a cluster, its `attempt` part by value in each `NodeJob`. `AttemptSettings`
is what every attempt shares wherever it runs (runs/attempt_setup.py sets an attempt up from it),
so it holds no secret and pickles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalkit.agent.agent_table import DEFAULT_AGENT
from evalkit.integrity import IntegrityPolicy
from evalkit.models.endpoint import ModelSpec, Sampling
from evalkit.runs.executor_table import DEFAULT_EXECUTOR
from evalkit.runs.folders import RUNS_ROOT
from evalkit.runs.limits import LimitOverrides
from evalkit.runs.user_setup import UserSetup
from evalkit.sandbox.backend_table import DEFAULT_BACKEND
from evalkit.sandbox.engine_watch import DEFAULT_WAIT_S
from evalkit.sandbox.protocol import DEFAULT_OUTPUT_LIMIT

DEFAULT_SUITE = Path("tasks/demo")
DEFAULT_CONCURRENCY = 2  # attempts at once when neither --concurrency nor the executor says


@dataclass(frozen=True)
class TaskChoice:
    """Which attempts: the suite, the tasks chosen of it, how many samples of each."""

    suite: Path = DEFAULT_SUITE
    samples: int = 1
    task_ids: list[str] | None = None  # --task (None: every task)
    limit: int | None = None  # only the first N tasks
    skip_invalid: bool = False  # go on with the tasks that load
    strict_env: bool = False  # refuse tasks whose environment has no offline base


@dataclass(frozen=True)
class ModelChoice:
    """The models to run and how a name is resolved: an [models.NAME] entry of the config, a
    built-in policy, or a model id at `base_url`, with the sampling and knobs given; a resumed
    model as run.json recorded it (`recorded`, filled by resuming)."""

    names: list[str] = field(default_factory=list)
    config: Path | None = None  # evalkit.toml (None: ./evalkit.toml if present)
    base_url: str | None = None
    api_key_env: str | None = None
    sampling: Sampling = field(default_factory=Sampling)
    knobs: dict[str, object] = field(default_factory=dict)  # endpoint knobs (tool_choice, stream...; None: unset)
    request_timeout_s: float | None = None
    max_retries: int | None = None
    reviewer: str | None = None  # the reviewer grading each change (evalkit/review/)
    reviewer_mode: str = "agentic"  # or no-tools
    preflight: bool = True  # check each endpoint once before anything is written
    recorded: dict[str, ModelSpec] = field(default_factory=dict)


@dataclass(frozen=True)
class AttemptSettings:
    """What every attempt of a run shares, wherever it runs (picklable, without a key)."""

    agent: str = DEFAULT_AGENT  # what works on each task (--agent)
    limits: LimitOverrides = field(default_factory=LimitOverrides)  # overrides of every task's budgets
    output_limit: int = DEFAULT_OUTPUT_LIMIT  # bytes of each output stream a command keeps
    integrity_policy: IntegrityPolicy = "fail"  # [scoring] integrity of the config
    user: UserSetup = field(default_factory=UserSetup)  # who answers `ask_user`


@dataclass(frozen=True)
class SandboxSettings:
    """Where the sandboxes come from: the backend, its pool, the engine's outages, a cluster's registry."""

    backend: str = DEFAULT_BACKEND
    pool: bool = True  # make the sandboxes about to be needed ahead of time
    engine_wait_s: float = DEFAULT_WAIT_S  # how long attempts pause for an engine that stops answering
    registry: str | None = None  # with a cluster: images pushed there for the nodes to pull


@dataclass(frozen=True)
class ExecutorSettings:
    """What runs the attempts, and how many at once."""

    name: str = DEFAULT_EXECUTOR
    ray_address: str | None = None
    concurrency: int | None = None  # None: what the executor holds at once, else DEFAULT_CONCURRENCY


@dataclass(frozen=True)
class RunSettings:
    """Everything a run was told. `run_id` names its folder under `out`; `typed` names the
    options given on the command line (a resumed run takes the others from its run.json)."""

    run_id: str = ""
    out: Path = RUNS_ROOT
    tasks: TaskChoice = field(default_factory=TaskChoice)
    models: ModelChoice = field(default_factory=ModelChoice)
    attempt: AttemptSettings = field(default_factory=AttemptSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    executor: ExecutorSettings = field(default_factory=ExecutorSettings)
    retry_errors: bool = False  # also run again the attempts that ended in endpoint_error (not recorded)
    typed: frozenset[str] = frozenset()
