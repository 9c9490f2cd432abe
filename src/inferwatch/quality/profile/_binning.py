"""Bins for drift statistics: cut points at reference quantiles, counts per bin.

A set of ``k`` cut points ``c_1 < ... < c_k`` defines ``k + 1`` bins
``(-inf, c_1), [c_1, c_2), ..., [c_k, +inf)``: the outer bins are open, so a
current value outside the reference range still lands in a bin (and shows up
as drift) instead of being dropped. Counting is ``np.searchsorted(cuts, x,
side="right")`` followed by ``np.bincount``; on sorted data it is
``np.diff`` of ``searchsorted(sorted_x, cuts)``, O(bins · log n).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError

__all__ = [
    "UNSEEN",
    "bin_counts",
    "bin_counts_sorted",
    "category_counts",
    "drop_nan",
    "equal_width_cuts",
    "is_missing",
    "quantile_cuts",
]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

UNSEEN = "__unseen__"
"""The bucket that collects current categories absent from the reference."""


def drop_nan(values: npt.ArrayLike, *, what: str = "values") -> tuple[FloatArray, int]:
    """The finite-or-infinite (non-NaN) values as float64, and how many NaNs were dropped."""
    try:
        x = np.asarray(values, dtype=np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what}: not numeric ({exc})") from exc
    nan = np.isnan(x)
    missing = int(nan.sum())
    return (x[~nan] if missing else x), missing


def quantile_cuts(reference: FloatArray, bins: int) -> FloatArray:
    """Cut points at the reference's ``i/bins`` quantiles, deduplicated.

    Quantiles that collapse onto one value (a point mass) are merged, so fewer
    than ``bins`` bins may result. A constant reference ``c`` gets the cuts
    ``[c, nextafter(c, +inf)]``: three bins "below c", "exactly c", "above c",
    so a shift away from the constant is still seen.
    """
    if bins < 2:
        raise InputError(f"bins must be at least 2, got {bins}")
    if reference.size == 0:
        raise InputError("cannot cut bins on an empty reference")
    probs = np.linspace(0.0, 1.0, bins + 1)[1:-1]
    cuts = np.unique(np.quantile(reference, probs))
    lo, hi = float(reference.min()), float(reference.max())
    if lo == hi:
        return np.array([lo, np.nextafter(lo, np.inf)])
    return cuts


def equal_width_cuts(values: FloatArray, bins: int) -> FloatArray:
    """Interior edges of ``np.histogram_bin_edges(values, bins)`` (Evidently-style bins)."""
    return np.histogram_bin_edges(values, bins=bins)[1:-1]


def bin_counts(values: FloatArray, cuts: FloatArray) -> IntArray:
    """Counts of (NaN-free) ``values`` in the ``len(cuts) + 1`` bins defined by ``cuts``."""
    idx = np.searchsorted(cuts, values, side="right")
    return np.bincount(idx, minlength=cuts.size + 1).astype(np.int64)


def bin_counts_sorted(sorted_values: FloatArray, cuts: FloatArray) -> IntArray:
    """Same as :func:`bin_counts` for already-sorted values, in O(bins · log n)."""
    pos = np.searchsorted(sorted_values, cuts, side="left")
    bounds = np.concatenate(([0], pos, [sorted_values.size]))
    return np.diff(bounds).astype(np.int64)


def category_counts(values: Sequence[object] | npt.ArrayLike, categories: Sequence[str]) -> FloatArray:
    """Counts of ``values`` per category, plus a last :data:`UNSEEN` bucket; ``None``/NaN dropped."""
    index = {c: i for i, c in enumerate(categories)}
    unseen = len(categories)
    keys = [str(v) for v in np.asarray(values, dtype=object).ravel() if not is_missing(v)]
    idx = np.fromiter((index.get(k, unseen) for k in keys), dtype=np.int64, count=len(keys))
    return np.bincount(idx, minlength=unseen + 1).astype(np.float64)


def is_missing(v: object) -> bool:
    """``None`` or NaN."""
    return v is None or (isinstance(v, float) and v != v)
