"""`evalkit reviewer calibrate`: a reviewer run on the calibration corpus (each task's reference and
its sloppy variants), scored beside the quality axis on the same changes, so that a user sees how
far to trust the reviewer before scoring with it: per kind the figures of figures.py (the
reviewer's and the axis's), and how often the reviewer and the axis agree that a variant is worse.

Each review is appended to `<out>.reviews.jsonl` as it ends, and a calibration started again with
the same reviewer and mode takes up the reviews already there: a long calibration can be resumed.
A review that failed (endpoint error, no verdict, out of schema) is kept with its error and counted;
it is left out of the figures, never read as a score."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd
from pydantic import BaseModel, ValidationError

from evalkit.calibration.corpus import CalibrationCase
from evalkit.calibration.figures import NOTICED, KindFigures, kind_figures
from evalkit.files import append_line, read_lines, write_atomic
from evalkit.records import utc_now
from evalkit.review.session import ReviewSession
from evalkit.review.verdict import ReviewVerdict
from evalkit.scoring.quality import QualityCache, score_quality

REFERENCE = "reference"


class CalibrationReview(BaseModel):
    """One change of the corpus, reviewed and scored by the axis."""

    task_id: str
    change: str  # "reference" or the sloppy kind
    verdict: ReviewVerdict
    axis: float | None  # the quality axis's score of the same change


class ReviewerCalibration(BaseModel):
    """What `evalkit reviewer calibrate` reports, as `<out>.json` keeps it."""

    reviewer: str
    mode: str
    suite: str
    made_at: str
    tasks: int
    changes: int  # reviews asked for (references and variants)
    failed: int  # reviews without a usable verdict
    errors: dict[str, int]  # the failed reviews' errors (their first words) -> count
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None
    reference_median: float | None  # the reviewer's median score of the references
    axis_reference_median: float | None
    kinds: list[KindFigures]  # the reviewer's figures per kind
    axis_kinds: list[KindFigures]  # the quality axis's, on the pairs the reviewer scored
    agreement: float | None  # share of (task, kind) pairs where reviewer and axis agree the variant is worse, or not
    agreement_pairs: int
    spearman: float | None  # rank correlation of reviewer and axis scores over every change scored by both


def _error_kind(error: str) -> str:
    return error.split(":")[0].split("(")[0].strip()[:60]


def load_reviews(path: Path, reviewer: str, mode: str) -> dict[tuple[str, str], CalibrationReview]:
    """The reviews an earlier calibration with this reviewer and mode appended to `path`."""
    done = {}
    if not path.exists():
        return done
    for line in read_lines(path):
        try:
            row = CalibrationReview.model_validate_json(line)
        except ValidationError:
            continue  # a line cut short by a kill
        if row.verdict.reviewer == reviewer and row.verdict.mode == mode:
            done[(row.task_id, row.change)] = row
    return done


def run_reviews(
    corpus: Sequence[CalibrationCase],
    session: ReviewSession,
    progress: Path,
    transcripts: Path | None = None,
    on_review: Callable[[CalibrationReview, int, int], None] = lambda row, n, total: None,
) -> list[CalibrationReview]:
    """Every change of `corpus` reviewed (those already in `progress` taken from it) and scored by
    the quality axis; each new review appended to `progress` as it ends."""
    reviewer = session.reviewer
    done = load_reviews(progress, reviewer.name, reviewer.mode)
    progress.parent.mkdir(parents=True, exist_ok=True)
    total = sum(1 + len(case.variants) for case in corpus)
    rows, n = [], 0
    with QualityCache() as cache:
        for case in corpus:
            for change, diff in [(REFERENCE, case.reference), *case.variants.items()]:
                n += 1
                row = done.get((case.task.id, change))
                if row is None:
                    transcript = transcripts / f"{case.task.id}__{change}.jsonl" if transcripts else None
                    verdict = session.review(case.task, diff, transcript)
                    axis = score_quality(diff, case.task.patch, case.base_file, cache=cache).score
                    row = CalibrationReview(task_id=case.task.id, change=change, verdict=verdict, axis=axis)
                    append_line(progress, row.model_dump_json())
                rows.append(row)
                on_review(row, n, total)
    return rows


def _scores(rows: Sequence[CalibrationReview], change: str, of: Callable[[CalibrationReview], float | None]) -> dict:
    return {r.task_id: of(r) for r in rows if r.change == change and of(r) is not None}


def summarise(rows: Sequence[CalibrationReview], suite: str, kinds: Sequence[str]) -> ReviewerCalibration:
    """The calibration's figures from its reviews (kinds in `kinds`' order)."""
    first = rows[0].verdict if rows else None
    reviewer = lambda r: r.verdict.score  # noqa: E731
    axis = lambda r: r.axis  # noqa: E731
    references, axis_references = _scores(rows, REFERENCE, reviewer), _scores(rows, REFERENCE, axis)
    reviewer_kinds, axis_kinds = [], []
    agree, pairs = 0, 0
    for kind in kinds:
        variants = _scores(rows, kind, reviewer)
        reviewer_kinds.append(kind_figures(kind, references, variants))
        both = {t: s for t, s in _scores(rows, kind, axis).items() if t in variants and t in references}
        axis_kinds.append(kind_figures(kind, {t: axis_references[t] for t in both if t in axis_references}, both))
        for task in both:
            if task not in axis_references:
                continue
            pairs += 1
            agree += (references[task] - variants[task] > 0) == (axis_references[task] - both[task] >= NOTICED)
    scored = [(r.verdict.score, r.axis) for r in rows if r.verdict.score is not None and r.axis is not None]
    spearman = None
    if len(scored) >= 3:
        frame = pd.DataFrame(scored, columns=["reviewer", "axis"])
        value = frame["reviewer"].corr(frame["axis"], method="spearman")
        spearman = None if pd.isna(value) else round(float(value), 4)
    failed = [r.verdict.error or "no score" for r in rows if r.verdict.score is None]
    costs = [r.verdict.cost_usd for r in rows]
    return ReviewerCalibration(
        reviewer=first.reviewer if first else "",
        mode=first.mode if first else "",
        suite=suite,
        made_at=utc_now(),
        tasks=len({r.task_id for r in rows}),
        changes=len(rows),
        failed=len(failed),
        errors=dict(Counter(_error_kind(e) for e in failed)),
        prompt_tokens=sum(r.verdict.prompt_tokens for r in rows),
        completion_tokens=sum(r.verdict.completion_tokens for r in rows),
        cost_usd=None if not costs or any(c is None for c in costs) else round(sum(costs), 6),
        reference_median=statistics.median(references.values()) if references else None,
        axis_reference_median=statistics.median(axis_references.values()) if axis_references else None,
        kinds=reviewer_kinds,
        axis_kinds=axis_kinds,
        agreement=agree / pairs if pairs else None,
        agreement_pairs=pairs,
        spearman=spearman,
    )


def write_calibration(calibration: ReviewerCalibration, out: Path) -> None:
    write_atomic(out, calibration.model_dump_json(indent=2) + "\n")


def progress_path(out: Path) -> Path:
    return out.with_name(out.stem + ".reviews.jsonl")
