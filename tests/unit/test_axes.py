"""The efficiency and interaction axes and the composite on hand-made attempts with known answers."""

import json

import pytest

from evalkit.errors import EvalkitError
from evalkit.records import AttemptRecord
from evalkit.scoring.attempt_scores import load_settings
from evalkit.scoring.composite import Weights, composite
from evalkit.scoring.efficiency import score_efficiency
from evalkit.scoring.interaction import InteractionPenalties, score_interaction
from evalkit.scoring.prices import Price, price_for, price_table
from evalkit.tasks.model import Limits


def record(**fields):
    base = {"run_id": "r", "task_id": "t", "model": "m", "sample": 0, "resolved": True, "stop_reason": "submitted"}
    return AttemptRecord(**{**base, **fields})


def assistant(*calls):
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}
        for i, (name, args) in enumerate(calls)
    ]
    return {"type": "message", "message": {"role": "assistant", "content": None, "tool_calls": tool_calls}}


def test_a_clean_attempt_scores_full_interaction():
    events = [assistant(("edit", json.dumps({"path": "a.py", "old_string": "x", "new_string": "y"})))]
    events.append(assistant(("submit", json.dumps({"summary": "Renamed x in a.py"}))))
    score = score_interaction(record(final_message="Renamed x in a.py"), events, ["a.py"])
    assert score.score == 1.0 and not any(score.counts.values())


def test_three_malformed_calls_show_three_and_cost_their_penalty():
    events = [assistant(("bash", "{oops")), assistant(("bash", "{}")), assistant(("bash", '{"command": 1}'))]
    rec = record(faults={"malformed_json": 1, "bad_arguments": 2}, final_message="Changed a.py")
    score = score_interaction(rec, events, ["a.py"])
    assert score.counts["malformed_call"] == 3
    assert score.score == pytest.approx(1 - 3 * 0.10)


def test_repeated_identical_calls_count_each_repeat_whatever_the_key_order():
    ls = json.dumps({"command": "ls", "timeout": 5})
    same = json.dumps({"timeout": 5, "command": "ls"})
    events = [assistant(("bash", ls)), assistant(("bash", same)), assistant(("bash", ls), ("bash", "pwd"))]
    score = score_interaction(record(final_message="a.py"), events, ["a.py"])
    assert score.counts["repeated_call"] == 2


def test_failed_edits_overruns_and_final_message():
    events = [assistant(("edit", "{}")), {"type": "tool", "name": "edit", "fault": "tool_error"}]
    rec = record(faults={"tool_error": 2}, stop_reason="max_turns", final_message=None)
    score = score_interaction(rec, events, ["pkg/mod.py"])
    assert score.counts["failed_edit"] == 1 and score.counts["tool_error"] == 1
    assert score.counts["budget_overrun"] == 1 and score.counts["no_final_message"] == 1
    vague = score_interaction(record(final_message="Done, all good."), [], ["pkg/mod.py"])
    named = score_interaction(record(final_message="Fixed the parser in mod.py"), [], ["pkg/mod.py"])
    assert vague.counts["unspecific_final"] == 1 and named.counts["unspecific_final"] == 0


def test_bash_writes_are_counted_but_only_penalised_when_configured():
    events = [assistant(("bash", json.dumps({"command": "cat > a.py <<'EOF'\nx = 1\nEOF"})))]
    default = score_interaction(record(final_message="a.py"), events, ["a.py"])
    strict = score_interaction(record(final_message="a.py"), events, ["a.py"], InteractionPenalties(bash_write=0.2))
    assert default.counts["bash_write"] == 1 and default.score == 1.0
    assert strict.score == pytest.approx(0.8)


def test_efficiency_uses_the_budget_and_prices_tokens():
    rec = record(
        usage={
            "prompt_tokens": 900_000,
            "completion_tokens": 100_000,
            "cached_tokens": 400_000,
            "total_tokens": 1_000_000,
        },
        turns=25,
        agent_s=900.0,
    )
    limits = Limits(max_tokens=2_000_000, max_turns=50, wall_time_s=1800)
    score = score_efficiency(rec, limits, Price(input=2.0, output=8.0, cached_input=0.5))
    assert score.budget_used == {"tokens": 0.5, "turns": 0.5, "time": 0.5} and score.score == 0.5
    assert score.cost_usd == pytest.approx((500_000 * 2.0 + 400_000 * 0.5 + 100_000 * 8.0) / 1e6)
    assert score_efficiency(rec, limits, None).cost_usd is None
    over = score_efficiency(record(turns=80, agent_s=0), limits, None)
    assert over.budget_used["turns"] == 1.6 and over.score == pytest.approx(1 - 1 / 3, abs=1e-4)


def test_price_lookup_and_user_prices(tmp_path):
    table = price_table({"my-model": {"input": 1, "output": 2}})
    assert price_for(table, "my-model", "local") == Price(input=1, output=2)
    assert price_for(table, "gpt-4o", "anything").output == 10.0
    assert price_for(table, "mystery", "mystery") is None
    assert price_for(table, "replay:x", "replay:x").cost(10, 10, 0) == 0
    with pytest.raises(EvalkitError, match=r'evalkit.toml: \[prices."bad"\] output: Field required'):
        price_table({"bad": {"input": 1}})


def test_composite_weights_are_normalised_and_configurable(tmp_path):
    axes = {"correctness": 1.0, "quality": 0.5, "efficiency": 1.0, "interaction": 0.0}
    assert composite(axes, Weights()) == pytest.approx(0.6 + 0.075 + 0.1)
    assert composite(axes, Weights(correctness=1, quality=1, efficiency=0, interaction=0)) == pytest.approx(0.75)
    settings = load_settings({"scoring": {"weights": {"correctness": 3, "quality": 1}}}, tmp_path / "evalkit.toml")
    assert settings.weights.normalised()["correctness"] == pytest.approx(3 / 4.25)
    with pytest.raises(EvalkitError, match=r"\[scoring\] unknown key `weights.speed`; allowed: correctness, quality"):
        load_settings({"scoring": {"weights": {"speed": 1}}}, tmp_path / "evalkit.toml")
