"""The loss model's inputs as one numpy matrix: numeric columns as they are, categoricals as codes.

A categorical column's codes are its reference categories in order of
frequency (at most ``MAX_CATEGORIES``, the most frequent kept: the gradient
boosting model bins a categorical feature into at most 255 bins); a value the
reference never had, or one of the rarer categories, becomes NaN (missing), as
does a missing value. The reference's range of each numeric column and its
categories are kept so that a window can be checked against the support.

>>> import numpy as np
>>> ref = {"age": np.array([1.0, 2.0, 3.0]), "fuel": np.array(["gas", "diesel", "gas"], dtype=object)}
>>> enc = FeatureEncoder.fit(ref, ("age", "fuel"), where="ref")
>>> enc.transform({"age": np.array([5.0]), "fuel": np.array(["electric"], dtype=object)}, where="a")
array([[ 5., nan]])
>>> enc.categorical
(False, True)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.profile import Column

__all__ = ["MAX_CATEGORIES", "FeatureEncoder", "numeric_column"]

MAX_CATEGORIES = 250
Array = npt.NDArray[np.float64]
Table = Mapping[str, Column]


def column(table: Table, name: str, where: str) -> Column:
    """A column of ``table`` (``InputError`` naming the file and the column when absent)."""
    if name not in table:
        raise InputError(f"{where}: no column named {name!r} (columns: {', '.join(list(table)[:20])})")
    return table[name]


def numeric_column(table: Table, name: str, where: str) -> Array:
    """A numeric column as float64 (``InputError`` when it holds text)."""
    col = column(table, name, where)
    if col.dtype != np.float64:
        sample = next((v for v in col.tolist() if v is not None), None)
        raise InputError(f"{where}: column {name!r} must be numeric (found {sample!r})")
    return col.astype(np.float64)


@dataclass(frozen=True, eq=False)
class FeatureEncoder:
    """Column names, which are categorical, their reference categories and numeric ranges."""

    columns: tuple[str, ...]
    categorical: tuple[bool, ...]
    categories: tuple[dict[str, int], ...]
    low: tuple[float, ...]
    high: tuple[float, ...]

    @classmethod
    def fit(cls, table: Table, columns: Sequence[str], *, where: str) -> FeatureEncoder:
        """Learn the categories (by frequency) and numeric ranges of ``columns`` in the reference."""
        cats: list[dict[str, int]] = []
        kinds, low, high = [], [], []
        for name in columns:
            col = column(table, name, where)
            is_cat = col.dtype != np.float64
            kinds.append(is_cat)
            if is_cat:
                counts = Counter(v for v in col.tolist() if v is not None)
                top = [v for v, _ in counts.most_common(MAX_CATEGORIES)]
                cats.append({str(v): i for i, v in enumerate(top)})
                low.append(np.nan)
                high.append(np.nan)
            else:
                cats.append({})
                finite = col[np.isfinite(col)]
                low.append(float(finite.min()) if finite.size else np.nan)
                high.append(float(finite.max()) if finite.size else np.nan)
        return cls(tuple(columns), tuple(kinds), tuple(cats), tuple(low), tuple(high))

    def transform(self, table: Table, *, where: str) -> Array:
        """The n × d float matrix of ``table``'s columns (codes for categoricals, NaN = missing)."""
        out = [self._encode(table, j, where) for j in range(len(self.columns))]
        if out:
            return np.column_stack(out)
        rows = len(next(iter(table.values()))) if table else 0
        return np.empty((rows, 0))  # no inputs: the loss is modelled from the prediction alone

    def _encode(self, table: Table, j: int, where: str) -> Array:
        name = self.columns[j]
        col = column(table, name, where)
        if not self.categorical[j]:
            if col.dtype != np.float64:
                # A column without any value reads as text-typed: it holds no text, only missing values.
                if any(v is not None for v in col.tolist()):
                    raise InputError(f"{where}: column {name!r} must be numeric, as in the reference")
                return np.full(len(col), np.nan)
            return col.astype(np.float64)
        codes = self.categories[j]
        # Numbers in a column that was text in the reference compare as their text.
        values = col.tolist() if col.dtype == np.object_ else [_text(v) for v in col.tolist()]
        return np.array([codes.get(v, np.nan) if v is not None else np.nan for v in values], dtype=np.float64)

    def outside(self, x: Array) -> npt.NDArray[np.bool_]:
        """Rows with a numeric value outside the reference's range or a category it never had."""
        out = np.zeros(x.shape[0], dtype=bool)
        for j, is_cat in enumerate(self.categorical):
            v = x[:, j]
            if is_cat:
                continue
            with np.errstate(invalid="ignore"):
                out |= (v < self.low[j]) | (v > self.high[j])
        return out

    def unseen(self, table: Table, x: Array) -> npt.NDArray[np.bool_]:
        """Rows with a category (not missing) that the reference did not have among its kept ones."""
        out = np.zeros(x.shape[0], dtype=bool)
        for j, is_cat in enumerate(self.categorical):
            if is_cat:
                present = np.array([v is not None for v in table[self.columns[j]].tolist()], dtype=bool)
                out |= present & np.isnan(x[:, j])
        return out


def _text(v: object) -> str | None:
    if not isinstance(v, float):
        return None if v is None else str(v)
    if v != v:
        return None
    return str(int(v)) if v.is_integer() else repr(v)
