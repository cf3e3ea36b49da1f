"""The decisions journal of a gather: `decisions.jsonl` in the `--out` folder, one line per decided
commit, appended as it is decided, so a killed gather loses at most the candidates in flight and
running it again with the same `--out` continues where it stopped.

A line is appended with one fsynced O_APPEND write (`files.append_line`); a line cut short by a
kill is dropped when the journal is reopened. An accepted commit's task folder is written (whole,
by rename) before its line, so an accepted line always has its folder; a line whose folder was
removed since (by hand, or because it fell beyond `--max-tasks`) counts as undecided, and the
commit is validated again when it can still make the suite.
"""

from __future__ import annotations

import shutil
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from evalkit.errors import EvalkitError
from evalkit.files import append_line, cut_partial_line, file_component, read_lines
from evalkit.gather.history import Rejection
from evalkit.tasks.load import TASK_FILE
from evalkit.tasks.model import Task
from evalkit.tasks.write import STAGING, write_task_atomic

JOURNAL = "decisions.jsonl"


class Decision(BaseModel):
    """One decided commit: accepted as a task, or rejected at a stage with a one-line reason."""

    repo: str  # what the tasks record as their source: a journal belongs to one repository
    sha: str
    subject: str
    outcome: Literal["accepted", "rejected"]
    stage: str  # "history", "prompt" or "validation" for a rejection; "validation" for a task
    reason: str = ""
    task_id: str | None = None
    prompt: str | None = None
    environment: str = ""  # "ran" / "failed": did the candidate's environment run the repository's tests
    loss: str = ""  # why an environment that failed did (repair.LossClass), "" otherwise
    repairs: list[str] = []  # the repair rounds, one line each: fix → outcome
    decided_at: str

    def rejection(self) -> Rejection:
        return Rejection(
            self.sha, self.subject, self.stage, self.reason, self.environment, self.loss, tuple(self.repairs)
        )


class Journal:
    """The decisions of one `--out` folder; safe to record from several threads."""

    def __init__(self, out: Path, repo: str) -> None:
        self.out = out
        self.repo = repo
        self.path = out / JOURNAL
        self._lock = threading.Lock()

    def open(self) -> dict[str, Decision]:
        """Create the folder, drop what a killed gather left half-written, and return the commits
        already decided (sha → decision; the last line of a sha wins)."""
        self.out.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.out / STAGING, ignore_errors=True)
        cut_partial_line(self.path)
        return {sha: d for sha, d in self.read().items() if d.outcome == "rejected" or self.has_folder(d)}

    def read(self) -> dict[str, Decision]:
        if not self.path.exists():
            return {}
        decided: dict[str, Decision] = {}
        for number, line in enumerate(read_lines(self.path), 1):
            if not line.strip():
                continue
            try:
                decision = Decision.model_validate_json(line)
            except ValidationError:
                raise EvalkitError(f"{self.path}: line {number} is not a gather decision; use another --out") from None
            if decision.repo != self.repo:
                raise EvalkitError(
                    f"{self.path}: the decisions of a gather of {decision.repo}, not {self.repo}; use another --out"
                )
            decided[decision.sha] = decision
        return decided

    def has_folder(self, decision: Decision) -> bool:
        return decision.task_id is not None and (self.out / file_component(decision.task_id) / TASK_FILE).is_file()

    def reject(self, rejection: Rejection) -> Decision:
        decision = self._decision(
            rejection.sha, rejection.subject, "rejected", rejection.stage, rejection.reason,
            environment=rejection.environment, loss=rejection.loss, repairs=list(rejection.repairs),
        )  # fmt: skip
        self._append(decision)
        return decision

    def accept(self, task: Task, sha: str, subject: str, repairs: list[str] = ()) -> Decision:
        """Write the task folder (complete or not at all), then the line that records it."""
        write_task_atomic(self.out, task)
        decision = self._decision(
            sha, subject, "accepted", "validation", task_id=task.id, prompt=task.prompt, environment="ran",
            repairs=list(repairs),
        )  # fmt: skip
        self._append(decision)
        return decision

    def _decision(self, sha: str, subject: str, outcome: str, stage: str, reason: str = "", **task) -> Decision:
        now = datetime.now(UTC).isoformat(timespec="seconds")
        fields = {"sha": sha, "subject": subject, "outcome": outcome, "stage": stage, "reason": reason}
        return Decision(repo=self.repo, decided_at=now, **fields, **task)

    def _append(self, decision: Decision) -> None:
        with self._lock:
            append_line(self.path, decision.model_dump_json())
