"""Population stability index (PSI), numeric and categorical, and its no-drift critical value.

    PSI = Σ_i (a_i − e_i) · ln(a_i / e_i)

with ``e_i`` and ``a_i`` the *fractions* (never raw counts) of the reference
and current samples in bin ``i``. An empty bin's fraction is replaced by
``epsilon`` (default :data:`DEFAULT_EPSILON` = 1e-4, Evidently's choice; set
``quality.psi_epsilon`` in the config) so the logarithm stays finite; a bin
empty in *both* samples contributes 0 and is skipped.

Under no drift, with ``N`` reference and ``M`` current values in ``B``
occupied bins, ``PSI / (1/N + 1/M)`` is approximately chi-square with
``B − 1`` degrees of freedom (PSI is the symmetrised Kullback-Leibler
divergence, whose scaled value is asymptotically the Pearson statistic of the
2 × B table). :func:`psi_critical` turns that into the PSI a window would reach
by chance with probability ``alpha``; below it, a PSI is noise.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import stats

from inferwatch._exceptions import InputError
from inferwatch.quality.profile import (
    FloatArray,
    bin_counts,
    category_counts,
    drop_nan,
    is_missing,
    quantile_cuts,
)

__all__ = [
    "DEFAULT_EPSILON",
    "psi",
    "psi_categorical",
    "psi_critical",
    "psi_from_counts",
]

DEFAULT_EPSILON = 1e-4
"""Fraction given to an empty bin (in one sample only) so that ``ln(a/e)`` is finite."""


def _fractions(counts: npt.ArrayLike, what: str) -> FloatArray:
    c = np.asarray(counts, dtype=np.float64)
    total = c.sum()
    if total <= 0:
        raise InputError(f"{what}: empty (no values to compare)")
    out: FloatArray = c / total
    return out


def psi_from_counts(
    reference_counts: npt.ArrayLike,
    current_counts: npt.ArrayLike,
    *,
    epsilon: float | tuple[float, float] = DEFAULT_EPSILON,
) -> float:
    """PSI of two count vectors over the same bins (converted to fractions first).

    ``epsilon`` may be a pair (reference, current) to reproduce tools that
    floor each sample differently (Evidently uses ``min nonzero / 1e6`` when the
    smallest non-empty fraction is at most 1e-4).

    >>> round(psi_from_counts([50, 50], [50, 50]), 6), round(psi_from_counts([50, 50], [90, 10]), 4)
    (0.0, 0.8789)
    """
    eps_ref, eps_cur = epsilon if isinstance(epsilon, tuple) else (epsilon, epsilon)
    if not (0 < eps_ref < 1 and 0 < eps_cur < 1):
        raise InputError(f"epsilon must be in (0, 1), got {epsilon}")
    e = _fractions(reference_counts, "reference")
    a = _fractions(current_counts, "current")
    if e.shape != a.shape:
        raise InputError(f"bin counts differ in length: {e.size} reference vs {a.size} current")
    used = (e > 0) | (a > 0)
    e = np.where(e[used] > 0, e[used], eps_ref)
    a = np.where(a[used] > 0, a[used], eps_cur)
    return float(np.sum((a - e) * np.log(a / e)))


def psi(
    reference: npt.ArrayLike,
    current: npt.ArrayLike,
    *,
    bins: int = 10,
    cuts: npt.ArrayLike | None = None,
    epsilon: float = DEFAULT_EPSILON,
) -> float:
    """PSI of two numeric samples; bins at reference quantiles unless ``cuts`` are given.

    NaNs are dropped from both samples (count them separately); an empty sample
    after dropping raises :class:`~inferwatch.InputError`. ``cuts`` are interior
    edges (see :mod:`inferwatch.quality.profile._binning`), e.g.
    ``np.histogram_bin_edges(np.r_[ref, cur], 30)[1:-1]`` for Evidently's bins.

    >>> x = np.arange(1000.0)
    >>> psi(x, x), psi(x, x + 500) > 0.5
    (0.0, True)
    """
    ref, _ = drop_nan(reference, what="reference")
    cur, _ = drop_nan(current, what="current")
    if ref.size == 0 or cur.size == 0:
        raise InputError(f"{'reference' if ref.size == 0 else 'current'}: empty (no non-NaN values)")
    c = quantile_cuts(ref, bins) if cuts is None else np.sort(np.asarray(cuts, dtype=np.float64))
    return psi_from_counts(bin_counts(ref, c), bin_counts(cur, c), epsilon=epsilon)


def psi_categorical(
    reference: Sequence[object] | npt.ArrayLike,
    current: Sequence[object] | npt.ArrayLike,
    *,
    epsilon: float = DEFAULT_EPSILON,
) -> float:
    """PSI over the reference's categories plus an "unseen" bucket for new current categories.

    >>> psi_categorical(["a", "b"] * 50, ["a", "b"] * 50)
    0.0
    >>> round(psi_categorical(["a"] * 99 + ["b"], ["c"] * 100), 2)  # all unseen
    18.36
    """
    cats = sorted({str(v) for v in np.asarray(reference, dtype=object).ravel() if not is_missing(v)})
    return psi_from_counts(category_counts(reference, cats), category_counts(current, cats), epsilon=epsilon)


def psi_critical(n_reference: int, n_current: int, occupied_bins: int, *, alpha: float = 0.05) -> float:
    """The PSI exceeded by chance with probability ``alpha`` under no drift.

        psi_critical = chi2.ppf(1 − alpha, B − 1) · (1/N + 1/M)

    with ``B`` the bins occupied in either sample (at least 2 counted).

    >>> round(psi_critical(10_000, 100, 10), 4), round(psi_critical(10_000, 100_000, 10), 5)
    (0.1709, 0.00186)
    """
    if n_reference <= 0 or n_current <= 0:
        raise InputError(f"sample sizes must be positive, got N={n_reference}, M={n_current}")
    if not 0 < alpha < 1:
        raise InputError(f"alpha must be in (0, 1), got {alpha}")
    dof = max(occupied_bins - 1, 1)
    return float(stats.chi2.ppf(1.0 - alpha, dof) * (1.0 / n_reference + 1.0 / n_current))

