"""How well a grader tells references from sloppy variants, kind by kind: the share of tasks where
the variant scores lower, the share caught (at least `CAUGHT` lower), the mean gap, and the area
under the ROC curve of references against the kind's variants (1: every reference above every
variant; 0.5: chance). A grader that gave no score to a change (a reviewer's failed review) leaves
that pair out, and the figures say how many pairs they stand on."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

CAUGHT = 0.15  # the gap, in score (0..1), at which a variant counts as caught
NOTICED = 0.05  # the gap at which the quality axis counts as having seen a difference (agreement)


class KindFigures(BaseModel):
    kind: str
    pairs: int  # tasks with both the reference and the variant scored
    lower: float | None  # share of pairs where the variant scores lower
    caught: float | None  # share at least CAUGHT lower
    mean_gap: float | None  # reference minus variant
    auc: float | None
    variant_mean: float | None


def auc(higher: Sequence[float], lower: Sequence[float]) -> float | None:
    """P(a score of `higher` beats one of `lower`), ties counting half (Mann-Whitney); None when
    either side is empty."""
    if not higher or not lower:
        return None
    wins = sum((h > v) + 0.5 * (h == v) for h in higher for v in lower)
    return wins / (len(higher) * len(lower))


def kind_figures(kind: str, references: Mapping[str, float], variants: Mapping[str, float]) -> KindFigures:
    """The figures of one kind from scores by task id (a task missing on either side is left out)."""
    tasks = sorted(set(references) & set(variants))
    gaps = [references[t] - variants[t] for t in tasks]
    if not gaps:
        return KindFigures(kind=kind, pairs=0, lower=None, caught=None, mean_gap=None, auc=None, variant_mean=None)
    return KindFigures(
        kind=kind,
        pairs=len(gaps),
        lower=sum(g > 0 for g in gaps) / len(gaps),
        caught=sum(g >= CAUGHT - 1e-9 for g in gaps) / len(gaps),
        mean_gap=statistics.mean(gaps),
        auc=auc(list(references.values()), [variants[t] for t in tasks]),
        variant_mean=statistics.mean(variants[t] for t in tasks),
    )


def table_lines(figures: Sequence[KindFigures]) -> list[str]:
    """The figures as a plain table (benchmarks print it; the CLI draws its own)."""

    def cell(value: float | None, form: str) -> str:
        return "-" if value is None else format(value, form)

    lines = [f"{'kind':22} {'pairs':>5} {'lower':>6} {'caught':>7} {'mean gap':>9} {'AUC':>5} {'variant mean':>13}"]
    for f in figures:
        lines.append(
            f"{f.kind:22} {f.pairs:5} {cell(f.lower, '6.0%')} {cell(f.caught, '7.0%')} "
            f"{cell(f.mean_gap, '9.3f')} {cell(f.auc, '5.2f')} {cell(f.variant_mean, '13.3f')}"
        )
    return lines
