"""How a model used the simulated user over some attempts: how often it asked, how much, and how
often the answer told it something the prompt did not (issue 19).

Over the attempts that could ask (the row's `user` is set) and were scored (errors are left out,
as everywhere). Shared by summary.json (per model) and the leaderboard.
"""

from __future__ import annotations

from collections.abc import Iterable


def ask_figures(attempts: Iterable[tuple[int, int]]) -> dict | None:
    """`attempts`: (questions asked, informative ones) per attempt that had a user. None when no
    attempt had one: the figures do not apply, they are not 0."""
    asked = list(attempts)
    if not asked:
        return None
    questions = sum(q for q, _ in asked)
    informative = sum(i for _, i in asked)
    return {
        "attempts": len(asked),
        "questions": questions,
        "ask_rate": round(sum(q > 0 for q, _ in asked) / len(asked), 4),  # share with ≥ 1 question
        "questions_per_attempt": round(questions / len(asked), 4),
        "informative_share": round(informative / questions, 4) if questions else None,  # of the questions asked
    }
