"""Two-sample tests and distances: Kolmogorov-Smirnov, Wasserstein, Jensen-Shannon, chi-square.

Each matches its scipy counterpart (the tests check it): ``scipy.stats.ks_2samp``
(method ``"auto"``), ``scipy.stats.wasserstein_distance``,
``scipy.spatial.distance.jensenshannon`` (natural log) and
``scipy.stats.chi2_contingency(..., correction=False)``. The numeric ones work
on *sorted* samples so that a reference sorted once at fit time is reused for
every window.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

from inferwatch._exceptions import InputError
from inferwatch.quality.profile import FloatArray, drop_nan

__all__ = [
    "TestResult",
    "chi2_homogeneity",
    "ecdf_distances",
    "js_distance",
    "ks_2samp",
    "ks_p_value",
    "wasserstein",
]

_EXACT_KS_MAX_N = 10_000  # scipy's MAX_AUTO_N: above it, ks_2samp's "auto" is asymptotic


@dataclass(frozen=True, slots=True)
class TestResult:
    """A test statistic and its p-value."""

    __test__ = False  # not a pytest class

    statistic: float
    p_value: float


def _sorted_sample(values: npt.ArrayLike, what: str) -> FloatArray:
    x, _ = drop_nan(values, what=what)
    if x.size == 0:
        raise InputError(f"{what}: empty (no non-NaN values)")
    return np.sort(x)


def ecdf_distances(ref_sorted: FloatArray, cur_sorted: FloatArray) -> tuple[float, float]:
    """KS statistic ``sup |F_r − F_c|`` and Wasserstein-1 ``∫ |F_r − F_c| dx`` of sorted samples.

    The pooled sample is ordered by one stable ``argsort`` (near-linear on two
    sorted runs) and both empirical CDFs read off as running counts; at tied
    values only the last of the run counts (scipy's ``side="right"``
    convention), and ties add no area.
    """
    n, m = ref_sorted.size, cur_sorted.size
    both = np.concatenate((ref_sorted, cur_sorted))
    order = np.argsort(both, kind="stable")
    pooled = both[order]
    cum_cur = np.cumsum(order >= n)
    # F_ref - F_cur at pooled[i] = (i + 1 - cum_cur) / n - cum_cur / m (two divisions, as scipy)
    gap = np.abs((np.arange(1, n + m + 1) - cum_cur) / n - cum_cur / m)
    step = np.diff(pooled)
    run_end = np.append(step != 0, True)
    return float(gap[run_end].max()), float(np.dot(gap[:-1], step))


def ks_p_value(statistic: float, n: int, m: int, ref: FloatArray, cur: FloatArray) -> float:
    """Two-sided KS p-value as ``scipy.stats.ks_2samp(method="auto")`` computes it, but fast.

    For ``max(N, M) <= 10 000`` scipy's exact distribution (cheap at those
    sizes). Above, scipy uses Smirnov's law ``kstwo.sf(D, round(N·M/(N+M)))``,
    and so do we, except where that costs up to 0.1 s per call: when the
    effective size ``en = N·M/(N+M)`` exceeds 1000 and the p-value is below
    0.01 (clear drift), Stephens' corrected Kolmogorov limit
    ``kstwobign.sf(D · (√en + 0.12 + 0.11/√en))`` is returned instead; it is
    within 10 % (relative) of scipy's value down to p = 1e-50.
    """
    if max(n, m) > _EXACT_KS_MAX_N:
        en = n * m / (n + m)
        if en > 1000:
            fast = float(stats.kstwobign.sf(statistic * (np.sqrt(en) + 0.12 + 0.11 / np.sqrt(en))))
            if fast < 0.01:
                return fast
        return float(np.clip(stats.kstwo.sf(statistic, round(en)), 0.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # scipy may fall back to asymptotic
        return float(stats.ks_2samp(ref, cur).pvalue)


def ks_2samp(reference: npt.ArrayLike, current: npt.ArrayLike) -> TestResult:
    """Two-sample Kolmogorov-Smirnov test: ``D = sup_x |F_ref(x) − F_cur(x)|`` and its p-value.

    >>> r = ks_2samp(np.arange(100.0), np.arange(100.0) + 50)
    >>> r.statistic, r.p_value < 1e-6
    (0.5, True)
    """
    ref, cur = _sorted_sample(reference, "reference"), _sorted_sample(current, "current")
    d, _ = ecdf_distances(ref, cur)
    return TestResult(d, ks_p_value(d, ref.size, cur.size, ref, cur))


def wasserstein(reference: npt.ArrayLike, current: npt.ArrayLike) -> float:
    """First Wasserstein (earth mover's) distance ``∫ |F_ref(x) − F_cur(x)| dx``, in the data's units.

    >>> wasserstein([0.0, 1.0], [5.0, 6.0])
    5.0
    """
    ref, cur = _sorted_sample(reference, "reference"), _sorted_sample(current, "current")
    return ecdf_distances(ref, cur)[1]


def js_distance(p: npt.ArrayLike, q: npt.ArrayLike) -> float:
    """Jensen-Shannon distance of two histograms (natural log, so in ``[0, sqrt(ln 2)]``).

        JS(p, q) = sqrt( (KL(p ‖ m) + KL(q ‖ m)) / 2 ),  m = (p + q) / 2

    ``p`` and ``q`` are normalised first; empty bins need no epsilon (0 · ln 0 = 0).

    >>> js_distance([1, 0], [1, 0]), round(js_distance([1, 0], [0, 1]) ** 2, 6), round(float(np.log(2)), 6)
    (0.0, 0.693147, 0.693147)
    """
    a, b = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    if a.shape != b.shape or a.sum() <= 0 or b.sum() <= 0:
        raise InputError("js_distance needs two non-empty histograms over the same bins")
    a, b = a / a.sum(), b / b.sum()
    m = (a + b) / 2.0
    kl = _kl(a, m) + _kl(b, m)
    return float(np.sqrt(max(kl / 2.0, 0.0)))


def _kl(p: FloatArray, m: FloatArray) -> float:
    nz = p > 0
    return float(np.sum(p[nz] * np.log(p[nz] / m[nz])))


def chi2_homogeneity(reference_counts: npt.ArrayLike, current_counts: npt.ArrayLike) -> TestResult:
    """Pearson chi-square test that two count vectors come from one distribution (2 × K table).

        X² = Σ (O − E)² / E,  E = row total · column total / N,  dof = K' − 1

    over the ``K'`` columns not empty in both rows; no Yates correction (equal
    to ``scipy.stats.chi2_contingency(table, correction=False)``). A single
    occupied column gives ``X² = 0, p = 1``.

    >>> r = chi2_homogeneity([50, 50], [50, 50]); (r.statistic, r.p_value)
    (0.0, 1.0)
    """
    table = np.vstack((np.asarray(reference_counts, np.float64), np.asarray(current_counts, np.float64)))
    table = table[:, table.sum(axis=0) > 0]
    rows = table.sum(axis=1)
    if (rows <= 0).any():
        raise InputError("chi-square needs non-empty reference and current counts")
    if table.shape[1] < 2:
        return TestResult(0.0, 1.0)
    expected = np.outer(rows, table.sum(axis=0)) / rows.sum()
    x2 = float(np.sum((table - expected) ** 2 / expected))
    return TestResult(x2, float(stats.chi2.sf(x2, table.shape[1] - 1)))
