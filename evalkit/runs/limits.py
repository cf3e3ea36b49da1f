"""Command-line overrides of every task's budgets (`--max-turns`, `--wall-time`...)."""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.tasks.model import Limits


@dataclass(frozen=True)
class LimitOverrides:
    """Overrides of every task's budgets (None: the task's own)."""

    max_turns: int | None = None
    max_tokens: int | None = None
    wall_time_s: float | None = None
    command_timeout_s: float | None = None

    def apply(self, limits: Limits) -> Limits:
        changes = {k: v for k, v in vars(self).items() if v is not None}
        return limits.model_copy(update=changes)
