"""The integrity section of `evalkit compare`: per side, how many paired attempts the integrity
scan failed or warned about and for which kinds; and the pairs whose verdict became `fail` in the
new run (a model that learnt to tamper with the tests is news even when its resolved rate holds).

It informs and never sets the exit code: a failing verdict already makes the attempt unresolved
(under `[scoring] integrity = "fail"`, the default), so the resolved axis counts it. Attempt tables
from before integrity (no `integrity` / `integrity_flags` columns) count as clean, and say so.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

VERDICT_COLUMN = "integrity"
FLAGS_COLUMN = "integrity_flags"
COLUMNS = (VERDICT_COLUMN, FLAGS_COLUMN)
EXIT_NOTE = (
    "integrity does not set the exit code by itself: an attempt the integrity scan fails is already "
    'unresolved under [scoring] integrity = "fail" (the default), so the resolved axis counts it'
)


class IntegritySide(BaseModel):
    """One side's paired attempts by integrity verdict, and the attempts flagged per kind."""

    recorded: bool = True  # False: the run's attempt table has no integrity columns (counted as clean)
    fail: int = 0
    warn: int = 0
    kinds: dict[str, int] = Field(default_factory=dict)


class IntegrityFlip(BaseModel):
    """A paired attempt whose integrity verdict is `fail` in the new run and was not in the base."""

    task_id: str
    sample: int
    kinds: list[str]  # every kind flagged on the new attempt


class IntegrityComparison(BaseModel):
    base: IntegritySide = Field(default_factory=IntegritySide)
    new: IntegritySide = Field(default_factory=IntegritySide)
    newly_failing: list[IntegrityFlip] = Field(default_factory=list)
    note: str = EXIT_NOTE


# -- figures (pure) --------------------------------------------------------------------------------
def with_integrity(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with both integrity columns; missing ones (older runs) or empty cells are clean."""
    frame = frame.copy()
    if VERDICT_COLUMN not in frame:
        frame[VERDICT_COLUMN] = "clean"
    if FLAGS_COLUMN not in frame:
        frame[FLAGS_COLUMN] = ""
    frame[VERDICT_COLUMN] = frame[VERDICT_COLUMN].fillna("clean").astype(str)
    frame[FLAGS_COLUMN] = frame[FLAGS_COLUMN].fillna("").astype(str)
    return frame


def has_integrity(frame: pd.DataFrame) -> bool:
    return VERDICT_COLUMN in frame.columns


def _kinds(flags: str) -> list[str]:
    return [kind for kind in flags.split(",") if kind]


def integrity_side(verdicts: np.ndarray, flags: np.ndarray, recorded: bool) -> IntegritySide:
    counts = Counter(kind for text in flags for kind in _kinds(str(text)))
    return IntegritySide(
        recorded=recorded,
        fail=int((verdicts == "fail").sum()),
        warn=int((verdicts == "warn").sum()),
        kinds=dict(sorted(counts.items())),
    )


def compare_integrity(
    task_ids: np.ndarray,
    samples: np.ndarray,
    base: tuple[np.ndarray, np.ndarray],
    new: tuple[np.ndarray, np.ndarray],
    recorded: tuple[bool, bool] = (True, True),
) -> IntegrityComparison:
    """The section over the paired attempts; `base` and `new` are (verdicts, comma-joined kinds)
    aligned with `task_ids` and `samples`."""
    newly = (new[0] == "fail") & (base[0] != "fail")
    return IntegrityComparison(
        base=integrity_side(*base, recorded[0]),
        new=integrity_side(*new, recorded[1]),
        newly_failing=[
            IntegrityFlip(task_id=str(task_ids[i]), sample=int(samples[i]), kinds=_kinds(str(new[1][i])))
            for i in np.flatnonzero(newly)
        ],
    )


# -- text --------------------------------------------------------------------------------------------
def _kinds_text(side: IntegritySide) -> str:
    return ", ".join(f"{kind} × {count}" for kind, count in side.kinds.items())


def side_text(side: IntegritySide) -> str:
    """`2 fail, 1 warn (test_tampering × 2, network_probe × 1)`, or why there are no figures."""
    if not side.recorded:
        return "not recorded (scored before integrity; counted as clean)"
    kinds = _kinds_text(side)
    return f"{side.fail} fail, {side.warn} warn" + (f" ({kinds})" if kinds else "")


def flip_names(flips: Sequence[IntegrityFlip], several_samples: bool) -> list[str]:
    """`t03 [test_tampering]`, with `#sample` when tasks have several samples."""
    return [
        f"{f.task_id}{f' #{f.sample}' if several_samples else ''} [{', '.join(f.kinds) or 'no kind recorded'}]"
        for f in flips
    ]


def integrity_lines(section: IntegrityComparison, several_samples: bool) -> list[str]:
    """The section as plain lines (terminal and markdown alike)."""
    names = flip_names(section.newly_failing, several_samples)
    return [
        f"integrity of the paired attempts: base {side_text(section.base)} → new {side_text(section.new)}",
        f"integrity fail in new, not in base ({len(names)}): {', '.join(names) or '—'}",
        section.note,
    ]


def markdown_lines(section: IntegrityComparison, several_samples: bool) -> list[str]:
    """A `### Integrity` block: fail, warn and kinds per side, then the newly failing pairs."""

    def cells(side: IntegritySide) -> list[str]:
        if not side.recorded:
            return ["not recorded"] * 3
        return [str(side.fail), str(side.warn), _kinds_text(side) or "—"]

    rows = zip(("fail", "warn", "kinds"), cells(section.base), cells(section.new), strict=True)
    names = flip_names(section.newly_failing, several_samples)
    listed = ", ".join(f"`{name}`" for name in names) or "none"
    return [
        "### Integrity (paired attempts)",
        "",
        "| | base | new |",
        "|---|---:|---:|",
        *(f"| {row} | {base} | {new} |" for row, base, new in rows),
        "",
        f"**Integrity fail in new, not in base ({len(names)}):** {listed}",
        "",
        f"_{section.note}._",
        "",
    ]


def junit_properties(section: IntegrityComparison) -> list[tuple[str, str]]:
    """Name/value pairs for a JUnit test suite's <properties>."""
    pairs = []
    for name, side in (("base", section.base), ("new", section.new)):
        pairs += [
            (f"integrity.{name}.recorded", str(side.recorded).lower()),
            (f"integrity.{name}.fail", str(side.fail)),
            (f"integrity.{name}.warn", str(side.warn)),
            (f"integrity.{name}.kinds", ",".join(f"{k}={n}" for k, n in side.kinds.items())),
        ]
    pairs += [("integrity.newly_failing", str(len(section.newly_failing))), ("integrity.note", section.note)]
    return pairs
