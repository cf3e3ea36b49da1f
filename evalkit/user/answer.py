"""What a simulated user returns for one question: the text the agent sees and how the question is
counted on the interaction axis (its class, leaks taken out, the simulator's tokens and time)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from evalkit.models.client import Usage


class QuestionClass(StrEnum):
    """informative: the answer added intent the prompt lacked; redundant: the prompt (or the code)
    already said it; unanswered: the user could not say (or did not answer)."""

    INFORMATIVE = "informative"
    REDUNDANT = "redundant"
    UNANSWERED = "unanswered"


@dataclass(frozen=True)
class UserAnswer:
    text: str  # what the agent sees (after redaction)
    question_class: QuestionClass
    redacted: int  # identifiers and lines of the reference change taken out (the `user_leak` count)
    usage: Usage = field(default_factory=Usage)  # the simulator's tokens; zero for oracle-user
    latency_s: float = 0.0
    error: str | None = None  # the simulator's endpoint failed: the agent is told there is no answer
