"""Aggregates over attempts: unbiased pass@k, best-of-k, and bootstrap confidence intervals.

With several samples per task, uncertainty comes from which tasks were drawn, not from the
samples: means are taken per task first and the bootstrap resamples tasks (a cluster bootstrap).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of k samples, drawn without replacement from n of which c are
    correct, is correct: 1 − C(n−c, k) / C(n, k) (Chen et al. 2021), in its stable product form."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"need 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def best_of_k(values: Sequence[float], k: int) -> float:
    """Expected maximum of k values drawn without replacement from `values` (best-of-k for a
    continuous score; for 0/1 values it equals pass@k)."""
    n = len(values)
    if not 0 < k <= n:
        raise ValueError(f"need 0 < k <= n (n={n}, k={k})")
    ordered = sorted(values)
    total = math.comb(n, k)
    # the i-th smallest (1-based) is the maximum of C(i-1, k-1) of the C(n, k) subsets
    return float(sum(ordered[i - 1] * count for i, count in zip(range(k, n + 1), _maxima(n, k), strict=True)) / total)


def _maxima(n: int, k: int) -> list[int]:
    """C(i-1, k-1) for i = k..n, each from the one before (C(i, k-1) = C(i-1, k-1) * i / (i-k+1),
    exact in integers): a summary asks for every k up to n, and math.comb each time was its cost."""
    counts = [1]
    for i in range(k, n):
        counts.append(counts[-1] * i // (i - k + 1))
    return counts


def bootstrap_ci(
    values: Sequence[float], confidence: float = 0.95, resamples: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (scipy), seeded so that reports are reproducible.
    A constant or single value has a zero-width interval."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return (math.nan, math.nan)
    if data.size == 1 or np.all(data == data[0]):
        return (float(data[0]), float(data[0]))
    low, high, _ = bootstrap_mean(data, confidence, resamples, seed)
    return (low, high)


def bootstrap_mean(data: np.ndarray, confidence: float, resamples: int, seed: int) -> tuple[float, float, np.ndarray]:
    """(low, high, resampled means): scipy's percentile bootstrap of the mean, seeded; the one
    resampling every report and comparison uses (the resampled means give one-sided p-values)."""
    result = stats.bootstrap(
        (data,),
        np.mean,
        confidence_level=confidence,
        n_resamples=resamples,
        method="percentile",
        rng=np.random.default_rng(seed),
        vectorized=True,
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high), result.bootstrap_distribution
