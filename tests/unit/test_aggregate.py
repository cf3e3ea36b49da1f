"""pass@k, best-of-k and the bootstrap interval against independent computations."""

import itertools
import math
import statistics

import numpy as np
import pytest

from evalkit.scoring.aggregate import best_of_k, bootstrap_ci, pass_at_k


@pytest.mark.parametrize(
    ("n", "c", "k"), [(n, c, k) for n in range(1, 8) for c in range(n + 1) for k in range(1, n + 1)]
)
def test_pass_at_k_matches_the_closed_form_and_enumeration(n, c, k):
    closed = 1 - math.comb(n - c, k) / math.comb(n, k)
    outcomes = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    enumerated = sum(any(s) for s in subsets) / len(subsets)
    assert pass_at_k(n, c, k) == pytest.approx(closed, abs=1e-12)
    assert pass_at_k(n, c, k) == pytest.approx(enumerated, abs=1e-12)


def test_pass_at_k_known_values():
    assert pass_at_k(10, 0, 5) == 0.0 and pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)  # 1 - C(3,2)/C(5,2) = 1 - 3/10
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        pass_at_k(3, 1, 4)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_best_of_k_is_the_expected_maximum_over_all_subsets(k):
    values = [0.2, 0.9, 0.5, 0.5, 0.1]
    subsets = list(itertools.combinations(values, k))
    assert best_of_k(values, k) == pytest.approx(statistics.fmean(max(s) for s in subsets))


def test_best_of_k_on_many_samples_is_the_closed_form_to_the_last_bit():
    # summaries store these numbers: the counts are built up in integers, never approximated
    rng = np.random.default_rng(3)
    for n in (40, 63, 300):
        values = [round(float(v), 4) for v in rng.random(n)]
        ordered = sorted(values)
        for k in range(1, n + 1):
            closed = sum(ordered[i - 1] * math.comb(i - 1, k - 1) for i in range(k, n + 1)) / math.comb(n, k)
            assert best_of_k(values, k) == closed, (n, k)


def test_best_of_k_on_outcomes_equals_pass_at_k():
    outcomes = [1, 0, 0, 1, 0, 0]
    for k in range(1, 7):
        assert best_of_k(outcomes, k) == pytest.approx(pass_at_k(6, 2, k))


def test_bootstrap_interval_covers_the_true_mean_at_about_the_nominal_rate():
    rng = np.random.default_rng(7)
    true_rate, n, trials = 0.4, 60, 300
    covered = 0
    for trial in range(trials):
        sample = (rng.random(n) < true_rate).astype(float)
        low, high = bootstrap_ci(sample, resamples=1000, seed=trial)
        covered += low <= true_rate <= high
    assert 0.90 <= covered / trials <= 0.98  # nominal 0.95; the percentile bootstrap runs a little narrow


def test_bootstrap_degenerate_inputs():
    assert bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    assert bootstrap_ci([0.3]) == (0.3, 0.3)
    low, high = bootstrap_ci([0, 1] * 20)
    assert low < 0.5 < high
    assert bootstrap_ci([0, 1] * 20) == (low, high)  # seeded: the same report twice
