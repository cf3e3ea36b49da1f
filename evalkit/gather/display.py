"""What a person watching `evalkit gather` sees: a live view with the commits screened, the
candidates validating, accepted and rejected by stage, the validation rate and an ETA (without a
terminal: one line per candidate started and decided, and a line when screening ends)."""

from __future__ import annotations

import threading
import time

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from evalkit.gather.journal import Decision
from evalkit.wording import counted


def _duration(seconds: float) -> str:
    minutes = round(seconds / 60)
    return f"{seconds:.0f} s" if seconds < 90 else f"{minutes} min" if minutes < 90 else f"{minutes / 60:.1f} h"


class GatherDisplay:
    """Counts of a gather as it runs; use as a context manager. Safe to call from several threads."""

    def __init__(self, console: Console, concurrency: int = 1) -> None:
        self.console = console
        self.concurrency = concurrency
        self.scanned = 0  # commits in the window
        self.screened = 0  # commits screened so far (this session or decided before)
        self.candidates = 0
        self.decided_before = 0
        self.validating: dict[str, str] = {}  # sha → subject
        self.accepted = 0
        self.rejected: dict[str, int] = {}
        self.validated_now = 0
        self.started_at: float | None = None  # first validation of this session
        self._lock = threading.Lock()
        self._live = Live(self, console=console, refresh_per_second=4, transient=False) if console.is_terminal else None

    def __enter__(self) -> GatherDisplay:
        if self._live:
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live:
            self._live.__exit__(*exc)

    def _say(self, line: str) -> None:
        if self._live is None:
            self.console.print(line, highlight=False, markup=False, soft_wrap=True)

    def window(self, scanned: int) -> None:
        self.scanned = scanned

    def screened_one(self, decision: Decision | None, earlier: bool = False) -> None:
        """A commit screened: `decision` None for a candidate left for validation; `earlier` when
        an earlier gather decided it."""
        with self._lock:
            self.screened += 1
            self.decided_before += earlier
            if decision is None or decision.stage != "history":
                self.candidates += 1
            if decision is not None:
                self._count(decision)

    def screening_done(self) -> None:
        before = f"; {counted(self.decided_before, 'commit')} decided before" if self.decided_before else ""
        self._say(
            f"{counted(self.scanned, 'commit')} scanned: {self.rejected.get('history', 0)} screened out, "
            f"{counted(self.candidates, 'candidate')}{before}"
        )

    def started(self, sha: str, subject: str) -> None:
        with self._lock:
            self.started_at = self.started_at or time.monotonic()
            self.validating[sha] = subject
        self._say(f"validating {sha[:10]} {subject[:60]}")

    def undecided(self, sha: str, subject: str, why: str) -> None:
        """A candidate whose validation could not run (a cluster node failed): not journaled."""
        with self._lock:
            self.validating.pop(sha, None)
        self._say(f"{sha[:10]} {subject[:50]}: not validated ({why[:160]}); the next gather tries it again")

    def decided(self, decision: Decision, detail: str = "") -> None:
        with self._lock:
            self.validating.pop(decision.sha, None)
            self.validated_now += 1
            self._count(decision)
            done = self.accepted + sum(n for stage, n in self.rejected.items() if stage != "history")
        verdict = f"accepted{detail}" if decision.outcome == "accepted" else f"rejected ({decision.stage}): "
        self._say(
            f"[{done}/{self.candidates}] {decision.sha[:10]} {decision.subject[:50]}: {verdict}"
            f"{decision.reason[:160]}; {self.pace()}"
        )

    def _count(self, decision: Decision) -> None:
        if decision.outcome == "accepted":
            self.accepted += 1
        else:
            self.rejected[decision.stage] = self.rejected.get(decision.stage, 0) + 1

    def rate(self) -> float | None:
        """Candidates validated per minute in this session."""
        if self.started_at is None or not self.validated_now:
            return None
        return self.validated_now * 60 / max(time.monotonic() - self.started_at, 1e-6)

    def pace(self) -> str:
        rate = self.rate()
        if rate is None:
            return "rate -"
        decided = self.accepted + sum(n for stage, n in self.rejected.items() if stage != "history")
        left = max(self.candidates - decided, 0)
        return f"{rate:.1f}/min, ETA {_duration(left / rate * 60)} (at most {counted(left, 'candidate')} left)"

    def __rich__(self) -> Group:
        rejected = ", ".join(f"{stage} {n}" for stage, n in sorted(self.rejected.items())) or "0"
        lines = [
            Text(f"commits  {self.screened}/{self.scanned} screened · {self.candidates} candidates", style="bold"),
            Text(
                f"validating {len(self.validating)} (of {self.concurrency}) · accepted {self.accepted} · "
                f"rejected {rejected} · {self.pace()}"
            ),
        ]
        lines += [Text(f"  {sha[:10]} {subject[:70]}", style="dim") for sha, subject in list(self.validating.items())]
        return Group(*lines)
