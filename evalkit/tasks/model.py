"""The Task record: what an agent is asked to do and how its answer is checked."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TaskSource(BaseModel):
    """Where the base code comes from: a bundled snapshot folder, or a git repository at a commit.

    The agent never sees this repository's history: the sandbox gets the base tree as a fresh
    repository with one commit.
    """

    model_config = ConfigDict(extra="forbid")

    snapshot: Path | None = Field(None, description="Folder holding the base tree (bundled suites).")
    git: str | None = Field(None, description="Local path or URL of a git repository.")
    base_commit: str | None = Field(None, description="Commit of `git` the task starts from.")

    @model_validator(mode="after")
    def _one_kind(self) -> TaskSource:
        if (self.snapshot is None) == (self.git is None):
            raise ValueError("give exactly one of `snapshot` or `git`")
        if self.git is not None and not self.base_commit:
            raise ValueError("`git` needs `base_commit`")
        return self


Framework = Literal["pytest", "tox", "django", "unittest"]
# The command a framework runs when a task names none; tox has none: its environment is the task's.
DEFAULT_COMMANDS: dict[str, str] = {
    "pytest": "python -m pytest",
    "django": "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1",
    "unittest": "python -m unittest -v",
}


class TestSpec(BaseModel):
    """How the hidden tests run and which of them decide the verdict."""

    model_config = ConfigDict(extra="forbid")
    __test__ = False  # not a pytest class

    command: str = Field("", description="Test command, run from the workspace root; empty: the framework's usual one.")
    framework: Framework = Field(
        "pytest",
        description="The test runner, deciding how the command is completed and how per-test results "
        "are read: pytest and tox (`tox --current-env ... --`, pytest behind it) through JUnit XML and "
        "evalkit's guard plugin; django (`tests/runtests.py`) and unittest from their verbose logs.",
    )
    fail_to_pass: list[str] = Field(..., min_length=1, description="Test ids that must go from fail to pass.")
    pass_to_pass: list[str] = Field(default_factory=list, description="Test ids that must keep passing.")
    timeout_s: float = Field(600, gt=0, description="Wall-time limit of one test run.")

    @model_validator(mode="after")
    def _command_for_framework(self) -> TestSpec:
        if not self.command.strip():
            if self.framework not in DEFAULT_COMMANDS:
                raise ValueError(f"framework {self.framework} needs a `command`, e.g. `tox --current-env -epy39 -v --`")
            self.command = DEFAULT_COMMANDS[self.framework]
        return self


class Limits(BaseModel):
    """Budgets of one agent attempt."""

    model_config = ConfigDict(extra="forbid")

    max_turns: int = Field(50, gt=0)
    max_tokens: int = Field(2_000_000, gt=0, description="Prompt + completion tokens over the attempt.")
    wall_time_s: float = Field(1800, gt=0)
    command_timeout_s: float = Field(120, gt=0, description="Per tool command.")
    network: bool = Field(False, description="Whether the agent phase may reach the network.")
    max_questions: int = Field(
        3, ge=0, description="Questions the agent may ask a simulated user (`ask_user`); past it, no answer."
    )


class UserSpec(BaseModel):
    """Whether the agent has someone to ask: `simulated`, a user simulator answers `ask_user`
    (as if `evalkit run --user simulated` were given for this task)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["none", "simulated"] = "none"


UNDERSPECIFIED = "underspecified"  # metadata key: names the tests need that no prompt gives


class Task(BaseModel):
    """One agent task: a short prompt over a base tree, hidden tests, and a reference change."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(..., pattern=r"^[A-Za-z0-9][A-Za-z0-9._\-]*$")
    prompt: str = Field(..., min_length=1)
    repo: str = Field("", description="Display name of the repository.")
    language: str = "python"
    tags: list[str] = Field(default_factory=list)
    image: str = Field(
        "python",
        description="A recipe under sandboxes/, a recipe folder relative to the task (./ or ../), or an image ref.",
    )
    source: TaskSource
    tests: TestSpec
    patch: str = Field(..., description="Reference change to non-test files (unified diff).")
    test_patch: str = Field(..., description="Hidden test change (unified diff); never shown to the agent.")
    limits: Limits = Field(default_factory=Limits)
    user: UserSpec = Field(default_factory=UserSpec)
    metadata: dict[str, str] = Field(default_factory=dict)

    @property
    def underspecified(self) -> list[str]:
        """The names the hidden tests need that the prompt does not give, as `evalkit gather`
        flagged them (`metadata["underspecified"]`, comma-separated); [] when none."""
        return [n.strip() for n in self.metadata.get(UNDERSPECIFIED, "").split(",") if n.strip()]
