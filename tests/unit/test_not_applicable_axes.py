"""An axis needs evidence an agent may not produce: an attempt whose agent left only its diff is
not scored on efficiency or interaction (None, "n/a"), the composite renormalises its weights over
correctness and quality, and summaries leave the axis out of their means instead of counting 0.
`score_attempt` on hand-made attempts of the toy task (no Docker; ruff runs on the host)."""

import pytest
from rich.console import Console
from toy import BASE_FILES, POWER, diff_of

from evalkit.axes import AXES, DIFF, EVIDENCE
from evalkit.records import AttemptRecord
from evalkit.runs.display import summary_table
from evalkit.scoring.attempt_scores import ScoringSettings, score_attempt
from evalkit.scoring.prices import Price
from evalkit.scoring.run_scores import results_frame, summarize
from evalkit.tasks.model import Limits

RIGHT = {"calc/__init__.py": BASE_FILES["calc/__init__.py"] + POWER}
START = {"type": "start", "limits": {"max_turns": 50, "max_tokens": 2_000_000, "wall_time_s": 1800}}


def _record(toy_task, toy_suite_dir, *, evidence, model="m", sample=0, edits=RIGHT, limits=None):
    """A resolved attempt; `evidence` None is a row from before agents declared theirs."""
    patch = diff_of(toy_suite_dir / "repos" / "calc", edits) if edits else ""
    return AttemptRecord(
        run_id="r",
        task_id=toy_task.id,
        model=model,
        sample=sample,
        agent="tool-loop" if evidence is None else "command",
        evidence=evidence,
        limits=limits,
        resolved=bool(edits),
        tests_resolved=bool(edits),
        stop_reason="submitted",
        usage={"prompt_tokens": 40_000, "completion_tokens": 3000, "total_tokens": 43_000} if evidence is None else {},
        turns=10 if evidence is None else 0,
        tool_calls=10 if evidence is None else 0,
        agent_s=60.0,
        final_message="Added power to calc/__init__.py" if evidence is None else None,
        model_patch=patch,
        patch_applied=bool(edits),
        fail_to_pass={"passed": toy_task.tests.fail_to_pass if edits else [], "failed": []},
        pass_to_pass={"passed": toy_task.tests.pass_to_pass, "failed": []},
    )


def _score(toy_task, record, events=(START,), price=None):
    return score_attempt(toy_task, record, list(events), BASE_FILES.get, ScoringSettings(), price)


def test_an_agent_with_only_a_diff_is_scored_on_correctness_and_quality(toy_task, toy_suite_dir):
    record = _record(toy_task, toy_suite_dir, evidence=[DIFF])
    scores = _score(toy_task, record, price=Price(input=1.0, output=1.0))
    assert scores.efficiency.score is None and scores.interaction.score is None
    assert scores.interaction.counts == {}  # no penalty counted from evidence that is not there
    assert scores.efficiency.cost_usd is None and not scores.efficiency.tokens_reported  # no usage: no cost, not $0
    assert scores.efficiency.wall_s == 60.0  # the figures the harness measured are kept
    weights = {axis.name: axis.weight for axis in AXES}
    share = weights["correctness"] + weights["quality"]
    assert scores.weights == pytest.approx({name: weights[name] / share for name in ("correctness", "quality")})
    expected = (weights["correctness"] * 1.0 + weights["quality"] * scores.quality.score) / share
    assert scores.correctness.score == 1.0 and scores.composite == pytest.approx(expected, abs=1e-4)


def test_no_work_still_earns_0_on_the_axes_that_apply(toy_task, toy_suite_dir):
    scores = _score(toy_task, _record(toy_task, toy_suite_dir, evidence=[DIFF], edits=None))
    assert not scores.did_work
    assert scores.quality.score == 0 and scores.composite == 0
    assert scores.efficiency.score is None and scores.interaction.score is None


def test_a_row_without_evidence_is_a_tool_loop_row_and_scores_every_axis(toy_task, toy_suite_dir):
    old = _record(toy_task, toy_suite_dir, evidence=None)
    row = old.model_dump(mode="json")
    del row["evidence"]  # as results.jsonl rows from before it was kept
    assert AttemptRecord.model_validate(row).produced == EVIDENCE
    declared = old.model_copy(update={"evidence": sorted(EVIDENCE)})
    assert _score(toy_task, old) == _score(toy_task, declared)
    assert None not in (_score(toy_task, old).efficiency.score, _score(toy_task, old).interaction.score)


def test_the_limits_come_from_the_record_before_the_trajectory(toy_task, toy_suite_dir):
    tight = Limits(max_turns=10, max_tokens=43_000, wall_time_s=60)
    record = _record(toy_task, toy_suite_dir, evidence=None, limits=tight)
    assert _score(toy_task, record).efficiency.budget_used == {"tokens": 1.0, "turns": 1.0, "time": 1.0}
    older = record.model_copy(update={"limits": None})  # a row from before limits were kept: the start event's
    assert _score(toy_task, older).efficiency.budget_used["turns"] == pytest.approx(10 / 50)


def _summary(toy_task, records):
    scores = [_score(toy_task, record) for record in records]
    return {entry["model"]: entry for entry in summarize(results_frame(records, scores), "model")}


def test_a_model_whose_agent_lacks_an_axis_shows_n_a_never_0(toy_task, toy_suite_dir):
    loop = _record(toy_task, toy_suite_dir, evidence=None, model="loop")
    command = _record(toy_task, toy_suite_dir, evidence=[DIFF], model="command")
    models = _summary(toy_task, [loop, command])
    for axis in ("efficiency", "interaction"):
        assert models["command"]["axes"][axis] == {"mean": None, "ci95": None, "not_applicable": True}
        assert models["loop"]["axes"][axis]["mean"] > 0
    assert models["command"]["axes"]["composite"]["mean"] == _score(toy_task, command).composite
    console = Console(width=200, record=True)
    console.print(summary_table(list(models.values()), "run"))
    line = next(line for line in console.export_text().splitlines() if line.startswith("command"))
    assert line.count("n/a") == 2 and " 0.00 " not in line


def test_a_mean_is_over_the_attempts_an_axis_applies_to(toy_task, toy_suite_dir):
    loop = _record(toy_task, toy_suite_dir, evidence=None, sample=0)
    command = _record(toy_task, toy_suite_dir, evidence=[DIFF], sample=1)
    efficiency = _summary(toy_task, [loop, command])["m"]["axes"]["efficiency"]
    alone = _score(toy_task, loop).efficiency.score
    assert efficiency == {"mean": alone, "ci95": [alone, alone]}
