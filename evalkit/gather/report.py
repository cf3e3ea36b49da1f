"""`gather-report.json`: every decision of a gather (rebuilt from its journal), the funnel from
commits scanned to tasks kept, and this session's validation rate.

The funnel counts the commits of the scanned window: screened out by size and shape, candidates
left, how many were validated (decided at the prompt or validation stage; a candidate left out at
the environment stage, such as Python 2 code, never reached a sandbox), accepted, and kept in
the suite (`--max-tasks`); survival is accepted / validated (SWE-rebench reports ~14 %). The
environment rate is the share of candidates whose tests ran in the sandbox (accepted or not) for
which some test passed: the era's image, install and collection worked (SWE-bench-Live's
automated builder reaches 78 %).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field

from evalkit.gather.history import Rejection
from evalkit.gather.journal import Decision
from evalkit.tasks.model import Task

REPORT = "gather-report.json"


@dataclass
class Funnel:
    scanned: int = 0  # commits in the window
    screened_out: int = 0  # left out by size and shape (the history stage)
    candidates: int = 0  # left for validation
    validated: int = 0  # candidates decided (prompt or validation stage)
    accepted: int = 0
    kept: int = 0  # tasks in the suite (at most --max-tasks)
    rejected_by_stage: dict[str, int] = field(default_factory=dict)
    environment_ran: int = 0  # validated candidates whose environment ran the repository's tests
    environment_failed: int = 0  # ... whose runs passed no test at all (image, install, collection)
    environment_losses: dict[str, int] = field(default_factory=dict)  # the failed ones by class (repair.py)
    environment_repaired: int = 0  # candidates whose environment ran after a repair round

    @property
    def survival(self) -> float | None:
        return self.accepted / self.validated if self.validated else None

    @property
    def environment_rate(self) -> float | None:
        """Of the candidates whose tests ran in the sandbox, the share whose environment ran them."""
        judged = self.environment_ran + self.environment_failed
        return self.environment_ran / judged if judged else None

    def as_json(self) -> dict:
        rates = {"survival": self.survival, "environment_rate": self.environment_rate}
        return {**asdict(self), **{k: None if v is None else round(v, 4) for k, v in rates.items()}}

    def line(self) -> str:
        """`940 commits → 128 candidates → 29 validated → 4 accepted (14 % survive) → 4 kept`."""
        survival = f" ({self.survival:.0%} survive)" if self.survival is not None else ""
        judged = self.environment_ran + self.environment_failed
        environment = (
            f"; environment ran the tests of {self.environment_ran} of {judged} ({self.environment_rate:.0%})"
            if self.environment_rate is not None
            else ""
        )
        if self.environment_repaired:
            environment += f", {self.environment_repaired} after a repair"
        if self.environment_losses:
            environment += "; lost: " + ", ".join(f"{n} {loss}" for loss, n in self.environment_losses.items())
        return (
            f"funnel: {self.scanned} commits → {self.candidates} candidates → {self.validated} validated → "
            f"{self.accepted} accepted{survival} → {self.kept} kept{environment}"
        )


def funnel_of(scanned: int, decisions: list[Decision], kept: int) -> Funnel:
    """The funnel of a window of `scanned` commits whose decided commits are `decisions`."""
    rejected = Counter(d.stage for d in decisions if d.outcome == "rejected")
    accepted = sum(d.outcome == "accepted" for d in decisions)
    losses = Counter(d.loss or "other" for d in decisions if d.environment == "failed")
    screened_out = rejected.get("history", 0)
    return Funnel(
        scanned=scanned,
        screened_out=screened_out,
        candidates=scanned - screened_out,
        validated=accepted + sum(n for stage, n in rejected.items() if stage in ("prompt", "validation")),
        accepted=accepted,
        kept=kept,
        rejected_by_stage=dict(sorted(rejected.items())),
        environment_ran=sum(d.environment == "ran" for d in decisions),
        environment_failed=sum(d.environment == "failed" for d in decisions),
        environment_losses=dict(losses.most_common()),
        environment_repaired=sum(bool(d.repairs) and d.environment == "ran" for d in decisions),
    )


@dataclass
class GatherReport:
    repo: str
    accepted: list[Task] = field(default_factory=list)  # the suite's tasks, newest commit first
    rejected: list[Rejection] = field(default_factory=list)
    scanned: int = 0
    funnel: Funnel = field(default_factory=Funnel)
    resumed: int = 0  # commits decided by an earlier gather into the same --out
    validated_now: int = 0  # candidates validated by this session
    validation_s: float = 0.0  # wall time this session spent validating
    concurrency: int = 1  # candidates this session validated side by side

    @property
    def per_minute(self) -> float | None:
        return round(self.validated_now * 60 / self.validation_s, 2) if self.validation_s > 0 else None

    def as_json(self) -> dict:
        return {
            "repo": self.repo,
            "scanned_commits": self.scanned,
            "accepted": [
                {"task_id": t.id, "commit": t.metadata.get("commit"), "prompt": t.prompt} for t in self.accepted
            ],
            "rejected": [asdict(r) for r in self.rejected],
            "funnel": self.funnel.as_json(),
            "session": {
                "decided_before": self.resumed,
                "concurrency": self.concurrency,
                "validated": self.validated_now,
                "validation_seconds": round(self.validation_s, 1),
                "validated_per_minute": self.per_minute,
            },
        }
