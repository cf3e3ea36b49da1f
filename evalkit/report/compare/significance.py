"""The tests behind `evalkit compare`, pure: the exact McNemar test for resolved, the paired
bootstrap over tasks for the continuous axes, and the verdict both lead to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalkit.report.compare.findings import AxisVerdict
from evalkit.scoring.aggregate import bootstrap_mean


def mcnemar_exact(worse: int, better: int) -> float:
    """One-sided exact McNemar p-value that new is worse: P(X ≥ worse) for X ~ Binomial(worse +
    better, 1/2), the discordant pairs being equally likely either way under no change."""
    total = worse + better
    if total == 0:
        return 1.0
    return float(stats.binomtest(worse, total, 0.5, alternative="greater").pvalue)


@dataclass(frozen=True)
class BootstrapResult:
    low: float
    high: float
    p_worse: float  # share of resampled mean differences ≥ 0 (the "new worse" hypothesis)
    p_better: float  # share ≤ 0


def paired_bootstrap(diffs: Sequence[float], confidence: float, resamples: int, seed: int) -> BootstrapResult:
    """Percentile bootstrap of the mean paired difference (new − base per task), resampling tasks.
    Constant differences need no resampling; a single task cannot show anything (p = 1)."""
    data = np.asarray(diffs, dtype=float)
    mean = float(data.mean())
    if data.size < 2:
        return BootstrapResult(mean, mean, 1.0, 1.0)
    if np.all(data == data[0]):
        return BootstrapResult(mean, mean, float(mean >= 0), float(mean <= 0))
    low, high, spread = bootstrap_mean(data, confidence, resamples, seed)
    return BootstrapResult(
        low,
        high,
        float(np.mean(spread >= 0)),
        float(np.mean(spread <= 0)),
    )


def axis_verdict(diff: float, p_worse: float, p_better: float, alpha: float, max_drop: float) -> AxisVerdict:
    if p_worse < alpha:
        return "regression" if -diff > max_drop else "small_drop"
    if p_better < alpha and diff > max_drop:
        return "improvement"
    return "no_change"
