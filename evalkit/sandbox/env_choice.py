"""Which environment a task gets: the SWE-bench spec of its (repository, version) and the Python
base chosen for it, exact or approximate. Pure (no Docker), so records and the command line can
ask without an engine; `task_env` builds the image.
"""

from __future__ import annotations

from dataclasses import dataclass

from evalkit.envs import EnvSpec, spec_for
from evalkit.sandbox.python_bases import BaseChoice, choose_base
from evalkit.tasks.model import Task
from evalkit.tasks.swebench import ENVIRONMENT_HINT


@dataclass(frozen=True)
class TaskEnvironment:
    """What a SWE-bench task's environment is: its spec and the base chosen for the spec's Python."""

    spec: EnvSpec
    choice: BaseChoice
    setup_commit: str

    @property
    def approximate(self) -> bool:
        return self.choice.approximate

    def describe(self) -> str:
        """`Python 3.6 wanted, 3.9 used (bullseye)`: what a report shows beside an approximate run."""
        base = self.choice.base
        return f"Python {self.spec.python} wanted, {base.python_version} used ({base.suite})"


def task_environment(task: Task) -> TaskEnvironment | None:
    """The environment SWE-bench specifies for `task`, or None for a task with none (not imported
    from SWE-bench, or a repository/version the tables do not know)."""
    meta = task.metadata
    if meta.get("environment") != ENVIRONMENT_HINT or not meta.get("version"):
        return None
    spec = spec_for(task.repo, meta["version"])
    if spec is None:
        return None
    commit = meta.get("environment_setup_commit") or task.source.base_commit or ""
    return TaskEnvironment(spec, choose_base(spec.python), commit)


def approximate_note(task: Task) -> str | None:
    """What an attempt record says of an environment that is not the one SWE-bench specifies."""
    env = task_environment(task)
    return f"approximate: {env.describe()}" if env is not None and env.approximate else None


def strict_environments(tasks: list[Task]) -> tuple[list[Task], list[str]]:
    """`--strict-env`: the tasks whose environment is exact (or their own), and one line for each
    refused because the Python its spec wants has no offline base."""
    kept, refused = [], []
    for task in tasks:
        note = approximate_note(task)
        if note is None:
            kept.append(task)
        else:
            refused.append(f"{task.id}: refused by --strict-env, its environment is {note}")
    return kept, refused
