"""The agent seam, used by something that is not evalkit's loop: a scripted agent that applies the
reference change through the Sandbox protocol alone is run, recorded and scored like any attempt,
and the harness (not the agent) takes the diff and the verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from evalkit.agent.protocol import AgentOutcome
from evalkit.axes import DIFF, FINAL_MESSAGE
from evalkit.models.endpoint import ModelSpec
from evalkit.records import StopReason
from evalkit.runs.attempt import AttemptKey, run_attempt
from evalkit.runs.store import RunStore
from evalkit.sandbox.protocol import Sandbox
from evalkit.scoring.attempt_scores import ScoringSettings, score_attempt
from evalkit.scoring.run_scores import base_tree
from evalkit.tasks.model import Limits
from evalkit.trajectory import TrajectoryWriter, read_trajectory

pytestmark = pytest.mark.integration


@dataclass
class PatchingAgent:
    """Writes a patch into the workspace and applies it with git: no model, no tools offered."""

    patch: str
    name: str = "scripted-patch"
    tools: list[dict] = field(default_factory=list)
    evidence: frozenset[str] = frozenset({DIFF, FINAL_MESSAGE})  # no token usage, no evalkit tool calls
    egress: None = None  # the task's own network setting
    layer: None = None  # nothing installed in the sandbox
    version: None = None

    def run(
        self, prompt: str, sandbox: Sandbox, limits: Limits, trajectory: TrajectoryWriter, deadline: float
    ) -> AgentOutcome:
        sandbox.write_file("/tmp/change.diff", self.patch)
        applied = sandbox.exec("git apply /tmp/change.diff", timeout=limits.command_timeout_s)
        trajectory.event("note", exit_code=applied.exit_code)
        stop = StopReason.SUBMITTED if applied.exit_code == 0 else StopReason.NO_TOOL_CALL
        return AgentOutcome(stop, turns=1, final_message=f"git apply exit {applied.exit_code}")


def test_an_agent_that_is_not_the_tool_loop_is_recorded_and_scored_by_the_harness(backend, toy_task, tmp_path):
    store = RunStore(tmp_path / "seam")
    store.open()
    spec = ModelSpec(name="none", model="none")
    limits = Limits(max_turns=3, wall_time_s=120)
    key = AttemptKey(toy_task, "none", 0)
    record = run_attempt(key, spec, PatchingAgent(toy_task.patch), backend, store, backend.run_id, limits)
    assert record.agent == "scripted-patch" and record.limits == limits
    assert record.stop_reason == "submitted" and record.turns == 1
    assert record.resolved and record.tests_resolved and record.model_patch.strip()  # diff taken by the harness
    events = read_trajectory(store.dir / record.trajectory)
    start = next(e for e in events if e["type"] == "start")
    assert start["agent"] == "scripted-patch" and start["tools"] == []
    assert any(e["type"] == "note" and e["exit_code"] == 0 for e in events)
    assert record.evidence == ["diff", "final_message"] and start["evidence"] == record.evidence
    scores = score_attempt(toy_task, record, events, base_tree(toy_task), ScoringSettings(), price=None)
    assert scores.correctness.score == 1.0 and scores.quality.score is not None and scores.composite > 0
    assert scores.efficiency.score is None and scores.interaction.score is None  # not applicable: not 0


def test_an_agent_that_changes_nothing_is_unresolved(backend, toy_task, tmp_path):
    store = RunStore(tmp_path / "seam-empty")
    store.open()
    record = run_attempt(
        AttemptKey(toy_task, "none", 0), ModelSpec(name="none", model="none"), PatchingAgent(""), backend, store,
        backend.run_id, Limits(max_turns=3, wall_time_s=120),
    )  # fmt: skip
    assert record.agent == "scripted-patch" and not record.resolved and record.model_patch == ""
