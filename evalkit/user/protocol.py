"""The seam between the agent's `ask_user` tool and whoever answers: a name to record and one call."""

from __future__ import annotations

from typing import Protocol

from evalkit.user.answer import UserAnswer
from evalkit.user.context import UserContext


class UserSimulator(Protocol):
    name: str  # recorded as the row's `user_model`

    def answer(self, question: str, context: UserContext, deadline: float | None = None) -> UserAnswer:
        """The user's reply to `question`, already redacted and classed, by `deadline` (a
        time.monotonic() value: the attempt's own end) at the latest; never raises for an endpoint
        failure or a deadline passed (the answer carries `error` instead)."""
        ...
