"""A run's simulated user: `--user none|simulated` and `--user-model NAME`, and, per attempt, the
channel through which the tool loop's `ask_user` reaches it.

A task enables a user for itself (`[user] mode = "simulated"`) even when the run does not; an
agent that cannot ask (one without `asks_user`) gets none either way.
The setup travels to cluster nodes by value: the user model's spec holds no key.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from evalkit.agent.protocol import Agent
from evalkit.errors import EvalkitError
from evalkit.models.endpoint import ModelSpec
from evalkit.tasks.model import Limits, Task
from evalkit.user.channel import UserChannel
from evalkit.user.context import user_context
from evalkit.user.protocol import UserSimulator
from evalkit.user.user_table import make_user

UserMode = Literal["none", "simulated"]
USER_MODES: tuple[str, ...] = ("none", "simulated")
DEFAULT_USER_MODEL = "oracle-user"


def check_user_mode(value: str) -> str:
    if value not in USER_MODES:
        raise EvalkitError(f"--user {value}: give none or simulated")
    return value


@dataclass(frozen=True)
class UserSetup:
    """Who answers `ask_user` in a run: `model` (oracle-user, or a model at `spec`'s endpoint)."""

    mode: UserMode = "none"
    model: str = DEFAULT_USER_MODEL
    spec: ModelSpec | None = None  # None for the built-in oracle-user

    def enabled_for(self, task: Task) -> bool:
        return self.mode == "simulated" or task.user.mode == "simulated"

    def needed(self, tasks: list[Task]) -> bool:
        """Whether any of `tasks` will have a user (the simulator is then made once for the run)."""
        return any(self.enabled_for(task) for task in tasks)

    def simulator(self) -> UserSimulator:
        return make_user(self.model, self._resolve)

    @contextmanager
    def serving(self, tasks: list[Task]) -> Iterator[UserSimulator | None]:
        """The run's simulator while the attempts of `tasks` run (None when none of them has a
        user); its connections are closed with it."""
        if not self.needed(tasks):
            yield None
            return
        simulator = self.simulator()
        try:
            yield simulator
        finally:
            close = getattr(simulator, "close", None)  # a model user holds a client; oracle-user nothing
            if close is not None:
                close()

    def _resolve(self, name: str) -> ModelSpec:
        if self.spec is None or self.spec.name != name:
            raise EvalkitError(f"--user-model {name}: no endpoint resolved for it")
        return self.spec


def user_channel(
    setup: UserSetup, simulator: UserSimulator | None, agent: Agent, task: Task, limits: Limits
) -> UserChannel | None:
    """The attempt's channel to its simulated user; None when it has none (not enabled, or its
    agent cannot offer `ask_user`)."""
    if simulator is None or not getattr(agent, "asks_user", False) or not setup.enabled_for(task):
        return None
    return UserChannel(simulator, user_context(task), limits.max_questions)
