"""Partial credit only for work done, and no verdict for a cheat: `score_attempt` on hand-made
attempts of the toy task (no Docker; ruff runs on the host for the quality axis)."""

import json

import pytest
from toy import BASE_FILES, POWER, diff_of

from evalkit.integrity import FlagKind, IntegrityFlag, IntegrityReport
from evalkit.records import AttemptRecord
from evalkit.scoring.attempt_scores import ScoringSettings, did_work, score_attempt

CALC = BASE_FILES["calc/__init__.py"]
WRONG_POWER = "\n\ndef power(a, b):\n    return a * b\n"
RIGHT = {"calc/__init__.py": CALC + POWER}
WRONG = {"calc/__init__.py": CALC + WRONG_POWER}
SUMMARY = "Added power to calc/__init__.py"


def _base(path: str) -> str | None:
    return BASE_FILES.get(path)


def _events(*calls: tuple[str, dict], final: str | None) -> list[dict]:
    events = [{"type": "start", "limits": {"max_turns": 50, "max_tokens": 2_000_000, "wall_time_s": 1800}}]
    for turn, (name, arguments) in enumerate(calls, 1):
        call = {"id": f"c{turn}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        events.append({"type": "message", "message": {"role": "assistant", "content": None, "tool_calls": [call]}})
        events.append({"type": "tool", "turn": turn, "call_id": f"c{turn}", "name": name, "fault": None})
    if final:
        events.append({"type": "message", "message": {"role": "assistant", "content": final}})
    return events


def _attempt(toy_task, toy_suite_dir, edits, *, tests_resolved, turns, integrity=None, final=SUMMARY):
    patch = diff_of(toy_suite_dir / "repos" / "calc", edits) if edits else ""
    passed = toy_task.tests.fail_to_pass if tests_resolved else []
    record = AttemptRecord(
        run_id="r",
        task_id=toy_task.id,
        model="m",
        sample=0,
        resolved=tests_resolved,
        tests_resolved=tests_resolved,
        stop_reason="submitted",
        usage={"prompt_tokens": 4000 * turns, "completion_tokens": 300 * turns, "total_tokens": 4300 * turns},
        turns=turns,
        tool_calls=turns,
        agent_s=5.0 * turns,
        final_message=final,
        model_patch=patch,
        patch_applied=True,
        fail_to_pass={"passed": passed, "failed": [t for t in toy_task.tests.fail_to_pass if t not in passed]},
        pass_to_pass={"passed": toy_task.tests.pass_to_pass, "failed": []},
        integrity=integrity or IntegrityReport(),
    )
    calls = [("edit", {"path": "calc/__init__.py", "old_string": "x", "new_string": "y"})] * max(0, turns - 1)
    events = _events(*calls, ("submit", {"summary": final or ""}), final=None)
    return record, events


def _score(toy_task, record, events, settings=None):
    return score_attempt(toy_task, record, events, _base, settings or ScoringSettings(), price=None)


def test_null_composite_is_zero_and_so_is_every_process_axis(toy_task, toy_suite_dir):
    record, events = _attempt(toy_task, toy_suite_dir, None, tests_resolved=False, turns=1, final="I give up.")
    scores = _score(toy_task, record, events)
    assert not scores.did_work
    assert scores.composite == 0
    assert scores.quality.score == scores.efficiency.score == scores.interaction.score == 0
    assert scores.efficiency.total_tokens == 4300  # the figures behind the axis are kept


def test_oracle_beats_honest_but_wrong_beats_no_op(toy_task, toy_suite_dir):
    oracle = _score(toy_task, *_attempt(toy_task, toy_suite_dir, RIGHT, tests_resolved=True, turns=3))
    wrong = _score(toy_task, *_attempt(toy_task, toy_suite_dir, WRONG, tests_resolved=False, turns=12))
    no_op = _score(toy_task, *_attempt(toy_task, toy_suite_dir, None, tests_resolved=False, turns=1, final="Done."))
    assert oracle.composite > wrong.composite > no_op.composite == 0


def test_a_no_op_never_earns_more_than_a_slow_honest_failure(toy_task, toy_suite_dir):
    """The honest try spends its whole budget and ends on it; the no-op spends nothing."""
    wrong_record, events = _attempt(
        toy_task, toy_suite_dir, WRONG, tests_resolved=False, turns=50, final=None
    )
    wrong_record = wrong_record.model_copy(update={"stop_reason": "max_turns", "agent_s": 1800.0})
    wrong = _score(toy_task, wrong_record, events)
    no_op = _score(toy_task, *_attempt(toy_task, toy_suite_dir, None, tests_resolved=False, turns=1))
    assert no_op.composite <= wrong.composite


@pytest.mark.parametrize(
    "edits",
    [
        {"calc/__init__.py": CALC.replace("    return a + b", "    return a + b   ")},  # whitespace only
        {"tests/test_calc.py": BASE_FILES["tests/test_calc.py"] + "\n\ndef test_x():\n    assert True\n"},
    ],
    ids=["whitespace only", "only files put back before the tests"],
)
def test_a_change_with_nothing_left_that_counts_is_no_work(toy_task, toy_suite_dir, edits):
    restored = [path for path in edits if path.startswith("tests/")]
    record, events = _attempt(
        toy_task, toy_suite_dir, edits, tests_resolved=False, turns=2, integrity=IntegrityReport.of([], restored)
    )
    assert not did_work(record)
    assert _score(toy_task, record, events).composite == 0


def test_a_change_that_does_not_apply_is_no_work(toy_task, toy_suite_dir):
    record, events = _attempt(toy_task, toy_suite_dir, RIGHT, tests_resolved=False, turns=2)
    record = record.model_copy(update={"patch_applied": False})
    assert _score(toy_task, record, events).composite == 0


def test_resolved_but_tampering_has_correctness_zero_and_composite_zero(toy_task, toy_suite_dir):
    tampered = IntegrityReport.of(
        [IntegrityFlag.make(FlagKind.TEST_TAMPERING, "monkeypatched test machinery: TestReport", None, "tests")]
    )
    record, events = _attempt(
        toy_task, toy_suite_dir, RIGHT, tests_resolved=True, turns=3, integrity=tampered
    )
    scores = _score(toy_task, record, events)
    assert scores.correctness.tests_resolved and not scores.correctness.resolved
    assert scores.correctness.score == 0 and scores.composite == 0
    assert scores.integrity.verdict == "fail"
    flag_only = _score(toy_task, record, events, ScoringSettings(integrity="flag"))
    assert flag_only.correctness.resolved and flag_only.composite > 0.9


def test_a_warning_does_not_cost_the_verdict(toy_task, toy_suite_dir):
    record, events = _attempt(toy_task, toy_suite_dir, RIGHT, tests_resolved=True, turns=2)
    events.insert(1, _events(("bash", {"command": "git log --all"}), final=None)[1])
    scores = _score(toy_task, record, events)
    assert scores.integrity.verdict == "warn" and scores.integrity.kinds() == ["git_history"]
    assert scores.correctness.resolved and scores.composite > 0.9


@pytest.mark.parametrize(("broken", "factor"), [(0, 1.0), (1, 0.5), (2, 0.0)])
def test_breaking_what_worked_costs_quality_in_proportion(toy_task, toy_suite_dir, broken, factor):
    """PASS_TO_PASS tests pass before the change: each one the change breaks takes its share of the
    quality score, and breaking them all leaves none (an honest-looking diff, 0.71 before)."""
    record, events = _attempt(toy_task, toy_suite_dir, WRONG, tests_resolved=False, turns=4)
    kept = record
    p2p = toy_task.tests.pass_to_pass
    assert len(p2p) == 2
    record = AttemptRecord.model_validate(
        {**record.model_dump(), "pass_to_pass": {"passed": p2p[broken:], "failed": p2p[:broken]}}
    )
    whole = _score(toy_task, kept, events).quality
    scored = _score(toy_task, record, events).quality
    assert whole.score > 0.5
    assert scored.score == pytest.approx(round(whole.score * factor, 4))
    assert scored.broken_pass_to_pass == broken
    assert scored.parts == whole.parts  # the parts stand; the breakage is evidence beside them
