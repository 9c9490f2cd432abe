"""Turning ``observe_prediction`` feature payloads into column blocks, without raising.

Accepted ``features`` (each payload may differ): a mapping of name → scalar
(one row), a mapping of name → 1-D array or list (a batch, one column per
feature), a sequence or 1-D numpy array in profile feature order (one row), or a
2-D numpy array (a batch of rows). Missing names become missing values;
payloads that cannot be read are counted as invalid and dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from inferwatch.quality.profile import CategoricalProfile, FloatArray, Profile

__all__ = ["Block", "Layout"]

ObjArray = npt.NDArray[np.object_]


@dataclass(frozen=True, slots=True)
class Block:
    """Rows of one batch: a float block of the numeric features and the categorical columns."""

    numeric: FloatArray
    categorical: tuple[ObjArray, ...]
    rows: int
    invalid: int


class Layout:
    """Where each feature of a profile goes in a block."""

    def __init__(self, profile: Profile) -> None:
        self.names = profile.names
        self.numeric = tuple(f.name for f in profile.features if not isinstance(f, CategoricalProfile))
        self.categorical = tuple(f.name for f in profile.features if isinstance(f, CategoricalProfile))
        self._num_pos = [i for i, f in enumerate(profile.features) if not isinstance(f, CategoricalProfile)]
        self._cat_pos = [i for i, f in enumerate(profile.features) if isinstance(f, CategoricalProfile)]

    def block(self, items: Sequence[Any]) -> Block:
        """Read every payload's features into one block; unreadable payloads are dropped and counted."""
        nums: list[FloatArray] = []
        cats: list[list[ObjArray]] = []
        invalid = 0
        for features in items:
            try:
                n, c = self._read(features)
            except (TypeError, ValueError, IndexError):
                invalid += 1
                continue
            nums.append(n)
            cats.append(c)
        if not nums:
            empty = tuple(np.empty(0, object) for _ in self.categorical)
            return Block(np.empty((0, len(self.numeric))), empty, 0, invalid)
        numeric = np.concatenate(nums) if len(nums) > 1 else nums[0]
        cat_cols = tuple(np.concatenate([c[j] for c in cats]) for j in range(len(self.categorical)))
        return Block(numeric, cat_cols, numeric.shape[0], invalid)

    def _read(self, features: Any) -> tuple[FloatArray, list[ObjArray]]:
        if isinstance(features, Mapping):
            return self._read_mapping(features)
        arr = np.asarray(features, dtype=object if self.categorical else np.float64)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2 or arr.shape[1] != len(self.names):
            raise ValueError(f"expected {len(self.names)} features per row, got shape {arr.shape}")
        numeric = arr[:, self._num_pos].astype(np.float64)
        return numeric, [_categorical(arr[:, j]) for j in self._cat_pos]

    def _read_mapping(self, features: Mapping[str, Any]) -> tuple[FloatArray, list[ObjArray]]:
        first = next(iter(features.values()), None)
        if isinstance(first, np.ndarray | list | tuple):  # a batch of columns
            size = len(first)
            nan = np.full(size, math.nan)
            cols = [np.asarray(features.get(n, nan), dtype=np.float64) for n in self.numeric]
            if any(c.shape != (size,) for c in cols):
                raise ValueError("feature columns differ in length")
            numeric = np.column_stack(cols) if cols else np.empty((size, 0))
            nones = np.full(size, None, dtype=object)
            cat = [_categorical(np.asarray(features.get(n, nones), dtype=object)) for n in self.categorical]
            if any(c.shape != (size,) for c in cat):
                raise ValueError("feature columns differ in length")
            return numeric, cat
        row = np.array([[_float(features.get(n)) for n in self.numeric]], dtype=np.float64)
        return row.reshape(1, len(self.numeric)), [_categorical([features.get(n)]) for n in self.categorical]


def _float(v: Any) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool | str):
        raise ValueError(f"not a number: {v!r}")
    return float(v)


def _categorical(values: Any) -> ObjArray:
    out = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        out[i] = None if v is None or (isinstance(v, float) and v != v) else str(v)
    return out
