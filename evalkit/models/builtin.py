"""The built-in models by name: `oracle`, `null` and `replay` → the policy the built-in server plays.
One place for `evalkit serve --policy NAME` and for a run's built-in models (`runs/orchestrate`)."""

from __future__ import annotations

from pathlib import Path

from evalkit.errors import EvalkitError
from evalkit.models.policies import NullPolicy, OraclePolicy, Policy, ReplayPolicy
from evalkit.tasks.model import Task


def builtin_policy(name: str, tasks: list[Task] | None = None, replay_path: Path | None = None) -> Policy:
    """The policy of a built-in model: the oracle plays the reference changes of `tasks`, replay the
    trajectories at `replay_path`. A missing input or an unknown name is one line naming the option."""
    if name == "oracle":
        if tasks is None:
            raise EvalkitError("--policy oracle needs --suite: the oracle plays the reference changes of a suite")
        return OraclePolicy(tasks)
    if name == "null":
        return NullPolicy()
    if name == "replay":
        if replay_path is None:
            raise EvalkitError("--policy replay needs --trajectory FILE (a trajectory .jsonl or a folder of them)")
        return ReplayPolicy(replay_path)
    raise EvalkitError(f"--policy {name}: choose oracle, null or replay")
