"""Efficiency: what an attempt spent (tokens, cost, turns, tool calls, time) and how much of the
task's budget that was.

score = 1 − mean(min(1, tokens / max_tokens), min(1, turns / max_turns), min(1, wall / wall_time_s)):
1.0 spends nothing, 0.0 exhausts every budget. Cost is in USD from the price table; a model without
a price has cost None (never a guess). An agent that reports no usage (evalkit.axes.USAGE) has no
efficiency score (None, "n/a") and no cost; the other figures are kept.

A simulated user's tokens (the row's `user_usage`) are not the agent's: they are in neither the
score nor `cost_usd`, but counted and priced apart (`user_tokens`, `user_cost_usd`, with the user
model's price).
"""

from __future__ import annotations

from pydantic import BaseModel

from evalkit.axes import USAGE
from evalkit.records import AttemptRecord
from evalkit.scoring.prices import Price
from evalkit.tasks.model import Limits


class EfficiencyScore(BaseModel):
    score: float | None  # None: not applicable (the agent reports no usage)
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int
    total_tokens: int
    tokens_reported: bool
    cost_usd: float | None
    turns: int
    tool_calls: int
    wall_s: float  # the agent phase: sandbox start to removal
    model_s: float
    sandbox_s: float
    budget_used: dict[str, float]  # tokens, turns, time: fraction of the task's budget
    user_tokens: int = 0  # the simulated user's, apart from the agent's
    user_cost_usd: float | None = None  # None: no simulated user, or no price for its model


def _tokens(usage: dict) -> tuple[int, int, int, int]:
    """(prompt, completion, cached, total) of a usage record; total defaults to prompt + completion."""
    prompt, completion = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    return prompt, completion, int(usage.get("cached_tokens", 0)), int(usage.get("total_tokens", prompt + completion))


def _user_cost(record: AttemptRecord, price: Price | None) -> tuple[int, float | None]:
    """The simulated user's total tokens and their cost with the user model's price."""
    prompt, completion, cached, total = _tokens(record.user_usage or {})
    if record.user is None or price is None:
        return total, None
    return total, round(price.cost(prompt, completion, cached), 6)


def score_efficiency(
    record: AttemptRecord, limits: Limits, price: Price | None, user_price: Price | None = None
) -> EfficiencyScore:
    usage = record.usage
    prompt, completion, cached, total = _tokens(usage)
    used = {
        "tokens": total / limits.max_tokens,
        "turns": record.turns / limits.max_turns,
        "time": record.agent_s / limits.wall_time_s,
    }
    score = 1 - sum(min(1.0, v) for v in used.values()) / len(used)
    reported = USAGE in record.produced
    user_tokens, user_cost = _user_cost(record, user_price)
    return EfficiencyScore(
        score=round(score, 4),
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached,
        total_tokens=total,
        tokens_reported=reported and bool(usage.get("reported", True)),
        cost_usd=None if price is None or not reported else round(price.cost(prompt, completion, cached), 6),
        turns=record.turns,
        tool_calls=record.tool_calls,
        wall_s=record.agent_s,
        model_s=record.model_time_s,
        sandbox_s=record.sandbox_time_s,
        budget_used={k: round(v, 4) for k, v in used.items()},
        user_tokens=user_tokens,
        user_cost_usd=user_cost,
    )
