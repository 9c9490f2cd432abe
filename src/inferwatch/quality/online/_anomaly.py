"""Anomalous samples: rows outside the reference, by a detector fitted on the reference.

A fitted detector flags rows of a window given as a numeric block (rows ×
numeric features, in profile order, NaN = missing) and the categorical columns.
The default :class:`SupportDetector` flags a row when any numeric value lies
outside the reference's ``[min, max]`` (widened by ``margin`` of the range) or
any categorical value was never seen in the reference; missing values are not
anomalies (they are counted apart). Any object with the same ``flags`` method
(an isolation forest fitted on the reference, say) can take its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.profile import CategoricalProfile, FloatArray, NumericProfile, Profile

__all__ = ["FittedAnomaly", "FittedSupport", "SupportDetector"]

BoolArray = npt.NDArray[np.bool_]


class FittedAnomaly(Protocol):
    """Flags anomalous rows of a window."""

    def flags(self, numeric: FloatArray, categorical: Sequence[npt.NDArray[np.object_]]) -> BoolArray:
        """One boolean per row: True when the row is anomalous."""
        ...


@dataclass(frozen=True, slots=True)
class SupportDetector:
    """Outside the reference support: ``x < min − margin·range`` or ``x > max + margin·range``, or unseen."""

    margin: float = 0.0

    def fit(self, profile: Profile) -> FittedSupport:
        """Read the support off a profile."""
        if self.margin < 0:
            raise InputError(f"margin must not be negative, got {self.margin}")
        nums = [f for f in profile.features if isinstance(f, NumericProfile)]
        lo = np.array([f.minimum for f in nums], dtype=np.float64)
        hi = np.array([f.maximum for f in nums], dtype=np.float64)
        pad = self.margin * (hi - lo)
        cats = tuple(frozenset(f.categories) for f in profile.features if isinstance(f, CategoricalProfile))
        return FittedSupport(lo - pad, hi + pad, cats)


@dataclass(frozen=True, slots=True)
class FittedSupport:
    """Support bounds per numeric feature and known categories per categorical feature."""

    low: FloatArray
    high: FloatArray
    categories: tuple[frozenset[str], ...]

    def flags(self, numeric: FloatArray, categorical: Sequence[npt.NDArray[np.object_]]) -> BoolArray:
        """Rows with a value outside the support (NaN compares False: not flagged)."""
        rows = numeric.shape[0] if numeric.ndim == 2 else (len(categorical[0]) if categorical else 0)
        out = np.zeros(rows, dtype=bool)
        if numeric.size:
            out |= ((numeric < self.low) | (numeric > self.high)).any(axis=1)
        for known, col in zip(self.categories, categorical, strict=True):
            out |= np.fromiter((v is not None and str(v) not in known for v in col), bool, count=len(col))
        return out
