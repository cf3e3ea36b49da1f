"""One attempt: open a sandbox, let the agent work, take its diff, close the sandbox, then score
the diff in a fresh container (so nothing the agent left running or changed outside the
repository can influence its verdict)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from evalkit.agent.protocol import Agent, AgentOutcome
from evalkit.agent.tools import ASK_USER_SCHEMA
from evalkit.diffs import readable
from evalkit.errors import EvalkitError
from evalkit.integrity import IntegrityPolicy, IntegrityReport, counts_as_resolved
from evalkit.models.endpoint import ModelSpec
from evalkit.records import SIMULATED, AttemptRecord, StopReason, TestGroupResult, utc_now
from evalkit.runs.store import RunStore
from evalkit.sandbox.egress import Egress
from evalkit.sandbox.env_choice import approximate_note
from evalkit.sandbox.protocol import SandboxBackend, SandboxRequest
from evalkit.tasks.model import Limits, Task
from evalkit.trajectory import TrajectoryWriter, read_trajectory
from evalkit.user.channel import UserChannel
from evalkit.verify.correctness import SCORE_ROLE, evaluate_patch
from evalkit.verify.integrity_scan import scan_attempt


@dataclass(frozen=True)
class AttemptKey:
    task: Task
    model: str
    sample: int


@dataclass(frozen=True)
class AttemptOutcome:
    """What a worker hands back: the attempt's row, whether the engine went away under it, and
    (from a cluster node) the trajectory's bytes and the files kept beside it (the agent's log,
    its own trajectory) by name, for the driver to write beside the row."""

    record: AttemptRecord
    engine_lost: bool = False
    trajectory: bytes | None = None
    beside: dict[str, bytes] = field(default_factory=dict)


AGENT_ROLE = "agent"


def attempt_sandboxes(
    key: AttemptKey, limits: Limits, egress: Egress | None = None, layer: str | None = None
) -> SandboxRequest:
    """The sandboxes `run_attempt` opens, for `SandboxBackend.prepare`: the agent's (reaching what
    the agent's `egress` says, or what the task's `network` says when None; its image with the
    installed agent `layer` when one), then, in the same thread, the scoring one (the plain task
    image, always)."""
    then = SandboxRequest(key.task, SCORE_ROLE)
    if egress is None:
        return SandboxRequest(key.task, AGENT_ROLE, limits.network, then=then, layer=layer)
    return SandboxRequest(key.task, AGENT_ROLE, egress=egress, then=then, layer=layer)


def run_attempt(
    key: AttemptKey,
    spec: ModelSpec,
    agent: Agent,
    backend: SandboxBackend,
    store: RunStore,
    run_id: str,
    limits: Limits,
    integrity_policy: IntegrityPolicy = "fail",
    user: UserChannel | None = None,
) -> AttemptRecord:
    """Run and score one attempt; the record says what happened, whatever the agent did. With
    `user` the agent may ask the attempt's simulated user (its tally goes on the record)."""
    started_at, started = utc_now(), time.monotonic()
    task = key.task
    path = store.trajectory_path(task.id, key.model, key.sample)
    patch, outcome = "", AgentOutcome(StopReason.SANDBOX_ERROR)
    with TrajectoryWriter(path) as trajectory:
        trajectory.event(
            "start",
            run_id=run_id,
            task_id=task.id,
            model=key.model,
            sample=key.sample,
            agent=agent.name,
            agent_version=agent.version,
            evidence=sorted(agent.evidence),
            endpoint=spec.public(),
            limits=limits.model_dump(),
            # the tool loop offers `ask_user` as a tool; an agent with its own tools, as a command
            tools=[*agent.tools, ASK_USER_SCHEMA] if user is not None and agent.tools else agent.tools,
            user=user.name if user is not None else None,
            started_at=started_at,
        )
        agent_started = time.monotonic()
        try:
            wanted = attempt_sandboxes(key, limits, agent.egress, agent.layer)
            sandbox = backend.open(
                task, role=AGENT_ROLE, network=wanted.network, egress=wanted.egress, layer=wanted.layer
            )
        except EvalkitError as exc:
            outcome.error = f"could not open a sandbox: {exc}"
            trajectory.event("stop", stop_reason=outcome.stop_reason.value, error=outcome.error)
        else:
            try:
                deadline = time.monotonic() + limits.wall_time_s
                # an agent that cannot ask gets no `user` argument: agents written before users keep working
                extra = {"user": user} if user is not None else {}
                outcome = agent.run(task.prompt, sandbox, limits, trajectory, deadline, **extra)
                sandbox.kill_all()  # a daemon the agent left would write into the diff's output or files
                patch = sandbox.diff()
            except EvalkitError as exc:
                outcome.stop_reason, outcome.error = StopReason.SANDBOX_ERROR, str(exc)
                trajectory.event("stop", stop_reason=outcome.stop_reason.value, error=outcome.error)
            finally:
                sandbox.close()
        agent_s = time.monotonic() - agent_started
        trajectory.event("diff", patch=readable(patch))  # the exact bytes go to the verdict
        correctness, integrity = None, IntegrityReport()
        if outcome.stop_reason is not StopReason.SANDBOX_ERROR:
            correctness = evaluate_patch(task, patch, backend)
            trajectory.event("correctness", result=correctness.model_dump(mode="json", exclude={"log"}))
            if correctness.environment_error:  # not the model's fault: an error, never a score
                outcome.stop_reason, outcome.error = StopReason.ENVIRONMENT_ERROR, correctness.error
            elif correctness.error and not correctness.patch_empty and correctness.patch_applied:
                outcome.error = outcome.error or f"scoring: {correctness.error}"
            restored = [r.label() for r in correctness.restored]
            integrity = scan_attempt(read_trajectory(path), patch, correctness.integrity_flags, restored)
            trajectory.event("integrity", result=integrity.model_dump(mode="json"))
    tests_resolved = bool(correctness and correctness.resolved)
    return AttemptRecord(
        run_id=run_id,
        task_id=task.id,
        model=key.model,
        sample=key.sample,
        agent=agent.name,
        agent_version=agent.version,
        limits=limits,
        evidence=sorted(agent.evidence),
        resolved=counts_as_resolved(tests_resolved, integrity, integrity_policy),
        tests_resolved=tests_resolved,
        stop_reason=outcome.stop_reason.value,
        error=outcome.error,
        usage=outcome.usage.as_dict(),
        turns=outcome.turns,
        tool_calls=outcome.tool_calls,
        faults=dict(outcome.faults),
        retries=dict(outcome.retries),
        duration_s=round(time.monotonic() - started, 3),
        agent_s=round(agent_s, 3),
        model_time_s=round(outcome.model_time_s, 3),
        sandbox_time_s=round(outcome.sandbox_time_s, 3),
        test_time_s=correctness.durations.get("total", 0.0) if correctness else 0.0,
        sampling=spec.sampling.request_kwargs(),
        endpoint=spec.public(),
        final_message=outcome.final_message,
        model_patch=patch,
        patch_applied=bool(correctness and correctness.patch_applied),
        fail_to_pass=correctness.fail_to_pass if correctness else TestGroupResult(passed=[], failed=[]),
        pass_to_pass=correctness.pass_to_pass if correctness else TestGroupResult(passed=[], failed=[]),
        integrity=integrity,
        trajectory=str(path.relative_to(store.dir)),
        started_at=started_at,
        finished_at=utc_now(),
        environment=approximate_note(task),
        **user_fields(user),
    )


def user_fields(user: UserChannel | None) -> dict:
    """The record's simulated-user fields: who answered, how many questions of each class, and the
    simulator's own tokens and time (never counted with the agent's)."""
    if user is None:
        return {}
    return {
        "user": SIMULATED,
        "user_model": user.name,
        "questions": user.questions,
        "question_classes": dict(user.classes),
        "user_leaks": user.leaks,
        "user_usage": user.usage.as_dict(),
        "user_time_s": round(user.time_s, 3),
    }
