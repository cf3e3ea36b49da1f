"""Scoring with a simulated user (issue 19): questions by class are interaction penalties, set under
[scoring.interaction]; the simulator's tokens are priced with the user model's price, apart from
the agent's cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.records import AttemptRecord
from evalkit.scoring.attempt_scores import load_settings
from evalkit.scoring.efficiency import score_efficiency
from evalkit.scoring.interaction import InteractionPenalties, score_interaction
from evalkit.scoring.prices import Price, price_table, user_price_for
from evalkit.tasks.model import Limits

ASKED = {"informative": 1, "redundant": 2, "unanswered": 1, "over_budget": 1}


def record(**fields) -> AttemptRecord:
    base = {"run_id": "r", "task_id": "t", "model": "m", "sample": 0, "resolved": True, "stop_reason": "submitted"}
    return AttemptRecord(**(base | {"final_message": "Changed calc.py"} | fields))


def test_each_question_class_is_counted_and_penalised():
    asked = record(user="simulated", user_model="oracle-user", questions=5, question_classes=ASKED)
    scores = score_interaction(asked, [], ["calc.py"])
    assert {k: scores.counts[k] for k in scores.counts if k.endswith("_question")} == {
        "informative_question": 1,
        "redundant_question": 2,
        "unanswered_question": 1,
        "over_budget_question": 1,
    }
    assert scores.score == pytest.approx(1 - 2 * 0.05 - 0.02 - 0.10)  # informative costs nothing
    assert score_interaction(record(), [], ["calc.py"]).score == 1.0  # no user: nothing asked, nothing lost


def test_an_agent_in_the_sandbox_pays_for_its_questions_like_the_tool_loop():
    """Installed and command: agents ask through `ask-user`; their interaction is read from the
    traffic, and their questions count there by the same classes and penalties."""
    traffic = ["diff", "traffic", "usage"]
    asked = record(user="simulated", questions=5, question_classes=ASKED, evidence=traffic)
    alone = score_interaction(record(evidence=traffic), [], ["calc.py"])
    scores = score_interaction(asked, [], ["calc.py"])
    assert scores.not_observed and scores.counts["redundant_question"] == 2
    assert scores.score == pytest.approx(alone.score - 2 * 0.05 - 0.02 - 0.10)


def test_the_penalties_are_set_under_scoring_interaction():
    config = {"scoring": {"interaction": {"redundant_question": 0.2, "informative_question": 0.01}}}
    settings = load_settings(config, Path("e.toml"))
    scores = score_interaction(record(user="simulated", question_classes=ASKED), [], ["calc.py"], settings.interaction)
    assert scores.penalties["redundant_question"] == 0.2
    assert scores.score == pytest.approx(1 - 0.01 - 2 * 0.2 - 0.02 - 0.10)
    with pytest.raises(EvalkitError, match=r"e.toml: \[scoring\].*unanswered_question"):
        load_settings({"scoring": {"interaction": {"unanswered_question": -1}}}, Path("e.toml"))
    assert InteractionPenalties().over_budget_question == 0.10


def test_the_simulators_tokens_are_priced_apart_from_the_agents():
    price, user_price = Price(input=2.5, output=10), Price(input=0.15, output=0.6)
    usage = {"prompt_tokens": 1_000_000, "completion_tokens": 100_000, "total_tokens": 1_100_000}
    user_usage = {"prompt_tokens": 2_000_000, "completion_tokens": 1_000_000, "total_tokens": 3_000_000}
    alone = score_efficiency(record(usage=usage), Limits(), price, user_price)
    asked = score_efficiency(
        record(usage=usage, user="simulated", user_model="small", user_usage=user_usage), Limits(), price, user_price
    )
    assert asked.cost_usd == alone.cost_usd == pytest.approx(2.5 + 1.0)  # the agent's alone
    assert asked.total_tokens == alone.total_tokens == 1_100_000 and asked.score == alone.score
    assert asked.user_tokens == 3_000_000 and asked.user_cost_usd == pytest.approx(0.3 + 0.6)
    assert alone.user_cost_usd is None  # no user: no user cost, not 0


def test_the_user_model_is_priced_by_its_name_and_the_oracle_user_is_free():
    table = price_table({"my-user": {"input": 1, "output": 2}})
    assert user_price_for(table, "my-user") == Price(input=1, output=2)
    assert user_price_for(table, "gpt-4o-mini") == table["gpt-4o-mini"]
    assert user_price_for(table, "oracle-user") == Price(input=0, output=0)
    assert user_price_for(table, "unknown-model") is None and user_price_for(table, None) is None
    unpriced = score_efficiency(record(user="simulated", user_usage={"prompt_tokens": 5}), Limits(), None, None)
    assert unpriced.user_cost_usd is None  # never a guess
