"""Reference profiles: what production drift needs to know about the reference data.

A profile holds, per feature, the bin cut points and the reference counts in
those bins (numeric features) or the reference categories and their counts
(categorical), and optionally the reference distribution of the model's
confidence. Scoring a window against a profile then needs only counts per bin:
O(bins) memory per feature, whatever the traffic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.profile._binning import (
    UNSEEN,
    FloatArray,
    IntArray,
    bin_counts,
    bin_counts_sorted,
    category_counts,
    drop_nan,
    quantile_cuts,
)

__all__ = [
    "CategoricalProfile",
    "Column",
    "FeatureProfile",
    "NumericProfile",
    "Profile",
    "Table",
    "as_categorical",
    "build_profile",
    "profile_categorical",
    "profile_numeric",
]

Column = npt.NDArray[np.float64] | npt.NDArray[np.object_]
"""A numeric column (float64, NaN = missing) or a categorical one (object: str, None = missing)."""

Table = Mapping[str, Column]
"""Columns by name, as :func:`inferwatch.quality.read_table` returns them."""


@dataclass(frozen=True, eq=False)
class NumericProfile:
    """A numeric feature's reference: cut points, counts per bin, support."""

    name: str
    cuts: FloatArray
    counts: IntArray
    missing: int
    minimum: float
    maximum: float
    type: str = field(default="numeric", init=False)

    @property
    def count(self) -> int:
        """Reference values that were not NaN."""
        return int(self.counts.sum())

    @property
    def proportions(self) -> FloatArray:
        """Reference fraction per bin."""
        return self.counts / max(self.count, 1)

    def bin(self, values: FloatArray) -> IntArray:
        """Counts of NaN-free ``values`` in this profile's bins."""
        return bin_counts(values, self.cuts)


@dataclass(frozen=True, eq=False)
class CategoricalProfile:
    """A categorical feature's reference: categories and their counts (an "unseen" bucket is implied)."""

    name: str
    categories: tuple[str, ...]
    counts: IntArray
    missing: int
    type: str = field(default="categorical", init=False)

    @property
    def count(self) -> int:
        """Reference values that were not missing."""
        return int(self.counts.sum())

    @property
    def proportions(self) -> FloatArray:
        """Reference fraction per category."""
        return self.counts / max(self.count, 1)

    @property
    def buckets(self) -> tuple[str, ...]:
        """Bucket labels: the categories, then :data:`UNSEEN`."""
        return (*self.categories, UNSEEN)

    def bin(self, values: npt.ArrayLike) -> IntArray:
        """Counts per category of ``values``, the last bucket counting unseen ones."""
        return category_counts(values, self.categories).astype(np.int64)


FeatureProfile = NumericProfile | CategoricalProfile


@dataclass(frozen=True, eq=False)
class Profile:
    """A whole reference: its features in column order, and optionally the confidence."""

    features: tuple[FeatureProfile, ...]
    bins: int
    rows: int
    confidence: NumericProfile | None = None
    labelled: tuple[FloatArray, FloatArray] | None = None
    """A binary model's reference scores (P(class 1)) and labels (0/1), for the performance estimator."""

    def __post_init__(self) -> None:
        names = [f.name for f in self.features]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise InputError(f"profile: feature names repeated: {', '.join(dupes)}")

    @property
    def names(self) -> tuple[str, ...]:
        """Feature names in column order."""
        return tuple(f.name for f in self.features)

    def feature(self, name: str) -> FeatureProfile:
        """The profile of one feature (``InputError`` naming it when absent)."""
        for f in self.features:
            if f.name == name:
                return f
        raise InputError(f"profile has no feature {name!r}")


def as_categorical(col: Column) -> Column:
    """A column as categorical: numbers become strings (``3.0`` → ``"3"``), NaN becomes ``None``."""
    if col.dtype == np.object_:
        return col
    out = np.empty(col.size, dtype=object)
    for i, v in enumerate(col.tolist()):
        out[i] = None if v != v else (str(int(v)) if float(v).is_integer() else repr(float(v)))
    return out


def profile_numeric(name: str, values: npt.ArrayLike, bins: int,
                    keep_sorted: dict[str, FloatArray] | None = None) -> NumericProfile:
    """Profile a numeric column: cuts at its quantiles, counts, NaNs counted as missing.

    The column is sorted once (quantiles and counts are then cheap); pass
    ``keep_sorted`` to get the sorted values back under ``name``.
    """
    x, missing = drop_nan(values, what=f"feature {name!r}")
    if x.size == 0:
        raise InputError(f"feature {name!r}: no non-missing values in the reference")
    xs = np.sort(x)
    if keep_sorted is not None:
        keep_sorted[name] = xs
    cuts = quantile_cuts(xs, bins)
    return NumericProfile(name, cuts, bin_counts_sorted(xs, cuts), missing, float(xs[0]), float(xs[-1]))


def profile_categorical(name: str, values: npt.ArrayLike) -> CategoricalProfile:
    """Profile a categorical column: its categories (sorted) and their counts."""
    arr = np.asarray(values, dtype=object).ravel()
    present = [str(v) for v in arr if v is not None and not (isinstance(v, float) and v != v)]
    if not present:
        raise InputError(f"feature {name!r}: no non-missing values in the reference")
    cats, counts = np.unique(np.asarray(present, dtype=str), return_counts=True)
    labels = tuple(str(c) for c in cats)
    return CategoricalProfile(name, labels, counts.astype(np.int64), arr.size - len(present))


def build_profile(
    table: Table,
    *,
    bins: int = 10,
    confidence: str | None = None,
    exclude: Sequence[str] = (),
    keep_sorted: dict[str, FloatArray] | None = None,
) -> Profile:
    """Profile every column of ``table`` (numeric by dtype, else categorical).

    ``confidence`` names the column holding the model's confidence (profiled
    apart, not as a feature); ``exclude`` lists columns to leave out (ids, labels);
    ``keep_sorted`` receives each numeric feature's sorted values (KS and
    Wasserstein reuse them).
    """
    if confidence is not None and confidence not in table:
        raise InputError(f"confidence column {confidence!r} not in the reference")
    missing = [c for c in exclude if c not in table]
    if missing:
        raise InputError(f"excluded columns not in the reference: {', '.join(missing)}")
    features: list[FeatureProfile] = []
    for name, col in table.items():
        if name == confidence or name in exclude:
            continue
        if col.dtype == np.object_:
            features.append(profile_categorical(name, col))
        else:
            features.append(profile_numeric(name, col, bins, keep_sorted))
    if not features:
        raise InputError("the reference has no feature columns")
    rows = len(next(iter(table.values())))
    conf = profile_numeric(confidence, table[confidence], bins) if confidence else None
    return Profile(tuple(features), bins, rows, conf)

