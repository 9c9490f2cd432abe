"""Drift statistics against scipy, their properties (hypothesis) and their edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from scipy.spatial import distance

from inferwatch import InputError
from inferwatch.quality import (
    chi2_homogeneity,
    js_distance,
    ks_2samp,
    psi,
    psi_categorical,
    psi_critical,
    psi_from_counts,
    quantile_cuts,
    wasserstein,
)

samples = st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=2, max_size=200)


@pytest.mark.parametrize(
    ("n", "m", "shift", "ties"),
    [
        (300, 200, 0.0, False),      # small: scipy's exact KS p-value
        (3000, 5000, 0.2, False),    # exact branch, clear drift
        (20000, 15000, 0.01, False),  # asymptotic branch, p not small: kstwo.sf exactly
        (500, 400, 0.1, True),       # ties: the run-end convention
    ],
)
def test_ks_and_wasserstein_match_scipy(n: int, m: int, shift: float, ties: bool) -> None:
    rng = np.random.default_rng(n + m)
    a, b = rng.normal(size=n), rng.normal(shift, size=m)
    if ties:
        a, b = np.round(a, 1), np.round(b, 1)
    ours, theirs = ks_2samp(a, b), stats.ks_2samp(a, b)
    assert ours.statistic == pytest.approx(theirs.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=1e-9)
    assert wasserstein(a, b) == pytest.approx(stats.wasserstein_distance(a, b), rel=1e-9)


def test_ks_fast_tail_is_close_to_scipy() -> None:
    # p < 0.01 at large samples: Stephens' limit, documented within 10 % of scipy
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=30000), rng.normal(0.04, size=30000)
    ours, theirs = ks_2samp(a, b), stats.ks_2samp(a, b)
    assert theirs.pvalue < 0.01
    assert ours.p_value == pytest.approx(theirs.pvalue, rel=0.1)


@pytest.mark.parametrize(
    ("p", "q"),
    [([1, 2, 3, 0], [2, 2, 0, 1]), ([0.5, 0.5], [0.9, 0.1]), ([10, 0, 0], [0, 0, 10])],
)
def test_js_matches_scipy_natural_log(p: list[float], q: list[float]) -> None:
    assert js_distance(p, q) == pytest.approx(distance.jensenshannon(p, q), rel=1e-12)


@pytest.mark.parametrize(
    ("ref", "cur"),
    [([10, 20, 30], [15, 15, 40]), ([5, 0, 7], [3, 0, 9]), ([100, 1], [90, 11])],
)
def test_chi2_matches_scipy_without_yates(ref: list[int], cur: list[int]) -> None:
    table = np.array([ref, cur])
    table = table[:, table.sum(axis=0) > 0]
    want = stats.chi2_contingency(table, correction=False)
    got = chi2_homogeneity(ref, cur)
    assert got.statistic == pytest.approx(want.statistic) and got.p_value == pytest.approx(want.pvalue)


def test_psi_formula_on_proportions_not_counts() -> None:
    # rule: PSI is computed on fractions: scaling the counts changes nothing
    e, a = np.array([0.25, 0.25, 0.5]), np.array([0.5, 0.25, 0.25])
    want = float(np.sum((a - e) * np.log(a / e)))
    assert psi_from_counts([25, 25, 50], [50, 25, 25]) == pytest.approx(want)
    assert psi_from_counts([1, 1, 2], [2000, 1000, 1000]) == pytest.approx(want)


@pytest.mark.parametrize(
    ("ref", "cur", "eps", "want"),
    [
        # rule: an empty bin's fraction is floored at epsilon
        ([50, 50, 0], [40, 40, 20], 1e-4, (0.4 - 0.5) * np.log(0.8) * 2 + (0.2 - 1e-4) * np.log(0.2 / 1e-4)),
        # rule: a bin empty in both samples contributes nothing
        ([50, 50, 0], [50, 50, 0], 1e-4, 0.0),
        # rule: the epsilon is configurable
        ([50, 50, 0], [40, 40, 20], 1e-3, (0.4 - 0.5) * np.log(0.8) * 2 + (0.2 - 1e-3) * np.log(0.2 / 1e-3)),
    ],
)
def test_psi_epsilon_floor(ref: list[int], cur: list[int], eps: float, want: float) -> None:
    assert psi_from_counts(ref, cur, epsilon=eps) == pytest.approx(want)


def test_psi_explicit_cuts_equal_histogram_bins() -> None:
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=4000), rng.normal(0.3, size=3000)
    edges = np.histogram_bin_edges(np.r_[a, b], bins=20)
    e = np.histogram(a, edges)[0] / a.size
    c = np.histogram(b, edges)[0] / b.size
    e, c = np.where(e == 0, 1e-4, e), np.where(c == 0, 1e-4, c)
    assert psi(a, b, cuts=edges[1:-1]) == pytest.approx(float(np.sum((c - e) * np.log(c / e))))


def test_psi_critical_is_the_chi2_quantile_scaled() -> None:
    want = stats.chi2.ppf(0.95, 9) * (1 / 1000 + 1 / 500)
    assert psi_critical(1000, 500, 10) == pytest.approx(want)
    # rule: under no drift, PSI exceeds the critical value about alpha of the time
    rng = np.random.default_rng(11)
    ref = rng.normal(size=5000)
    cuts = quantile_cuts(ref, 10)
    over = sum(psi(ref, rng.normal(size=300), cuts=cuts) > psi_critical(5000, 300, 10) for _ in range(400))
    assert 5 <= over <= 45  # 5 % of 400 = 20; wide bounds, the chi-square law is approximate


@pytest.mark.parametrize(
    ("reference", "current", "match"),
    [
        ([], [1.0], "empty"),                          # rule: empty reference is an error
        ([1.0, 2.0], [], "empty"),                     # rule: empty window is an error
        ([np.nan, np.nan], [1.0], "empty"),            # rule: all-NaN is empty after dropping NaN
        (["a", "b"], [1.0], "not numeric"),            # rule: non-numeric input is named
    ],
)
def test_psi_bad_input_is_a_clear_error(reference: list[object], current: list[object], match: str) -> None:
    with pytest.raises(InputError, match=match):
        psi(reference, current)


def test_nan_values_are_dropped_not_propagated() -> None:
    x = np.arange(100.0)
    assert psi(np.r_[x, np.nan], np.r_[x, np.nan, np.nan]) == 0.0
    assert ks_2samp(np.r_[x, np.nan], x).statistic == 0.0


def test_constant_column_gets_below_at_above_bins() -> None:
    # rule: collapsing quantiles are deduplicated; a constant keeps three bins
    cuts = quantile_cuts(np.full(100, 3.0), 10)
    assert cuts.size == 2 and cuts[0] == 3.0
    assert psi(np.full(100, 3.0), np.full(100, 3.0)) == 0.0
    assert psi(np.full(100, 3.0), np.full(100, 4.0)) > 1.0
    point_mass = np.r_[np.zeros(80), np.arange(20.0)]
    assert np.all(np.diff(quantile_cuts(point_mass, 10)) > 0)


def test_categorical_unseen_bucket() -> None:
    ref = ["a"] * 50 + ["b"] * 50
    assert psi_categorical(ref, ref[::-1]) == 0.0
    with_new = ["a"] * 45 + ["b"] * 45 + ["zz"] * 10
    e, a = np.array([0.5, 0.5, 1e-4]), np.array([0.45, 0.45, 0.1])
    assert psi_categorical(ref, with_new) == pytest.approx(float(np.sum((a - e) * np.log(a / e))))


@settings(max_examples=60, deadline=None)
@given(samples)
def test_psi_of_a_sample_with_itself_is_zero(x: list[float]) -> None:
    assert psi(x, x) == 0.0


@settings(max_examples=60, deadline=None)
@given(samples, samples)
def test_psi_non_negative_and_order_free(x: list[float], y: list[float]) -> None:
    value = psi(x, y)
    assert value >= 0.0
    rng = np.random.default_rng(0)
    assert psi(rng.permutation(x), rng.permutation(y)) == pytest.approx(value, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=2, max_size=12).filter(lambda c: sum(c) > 0),
       st.lists(st.integers(0, 50), min_size=2, max_size=12).filter(lambda c: sum(c) > 0))
def test_psi_from_counts_symmetric(a: list[int], b: list[int]) -> None:
    n = min(len(a), len(b))
    a, b = a[:n], b[:n]
    if sum(a) == 0 or sum(b) == 0:
        return
    # rule: PSI on fixed bins is symmetric (both fractions floored alike)
    assert psi_from_counts(a, b) == pytest.approx(psi_from_counts(b, a))
    assert js_distance(a, b) == pytest.approx(js_distance(b, a))
    assert 0.0 <= js_distance(a, b) <= np.sqrt(np.log(2)) + 1e-12


@settings(max_examples=40, deadline=None)
@given(samples, samples)
def test_ks_wasserstein_symmetric_bounded(x: list[float], y: list[float]) -> None:
    r1, r2 = ks_2samp(x, y), ks_2samp(y, x)
    assert r1.statistic == pytest.approx(r2.statistic) and 0.0 <= r1.statistic <= 1.0
    assert 0.0 <= r1.p_value <= 1.0
    assert wasserstein(x, y) == pytest.approx(wasserstein(y, x), rel=1e-9, abs=1e-6)


def test_psi_epsilon_per_sample_pair() -> None:
    # rule: a (reference, current) epsilon pair floors each sample with its own value
    e = np.array([0.5, 0.5, 1e-6])
    a = np.array([0.5, 0.25, 0.25])
    want = float(np.sum((a - e) * np.log(a / e)))
    assert psi_from_counts([50, 50, 0], [2, 1, 1], epsilon=(1e-6, 1e-3)) == pytest.approx(want)
    with pytest.raises(InputError, match="epsilon"):
        psi_from_counts([1, 1], [1, 1], epsilon=(0.0, 0.1))
