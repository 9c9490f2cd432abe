"""PromQL's runtime values at one step: scalars, strings, instant vectors, range windows; errors."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inferwatch._exceptions import InferwatchError
from inferwatch.model import METRIC_NAME_LABEL, Labels

__all__ = ["EvalError", "Matrix", "Value", "Vector", "check_unique", "drop_name", "keep_labels",
           "without_labels"]

Vector = list[tuple[Labels, float]]


class EvalError(InferwatchError):
    """An expression could not be evaluated (Prometheus's execution error, e.g. many-to-many matching)."""


@dataclass(frozen=True, eq=False)
class Matrix:
    """A range value at one step: each series' points in ``[lo, hi]`` ms (a range selector or subquery)."""

    series: list[tuple[Labels, np.ndarray, np.ndarray]]
    lo: int
    hi: int
    range_s: float
    ts: int = 0  # the evaluation step (predict_linear extrapolates from it, not from hi)


Value = float | str | Vector | Matrix

_NAME_CACHE: dict[Labels, Labels] = {}


def drop_name(labels: Labels) -> Labels:
    """``labels`` without ``__name__`` (memoised: series labels repeat step after step)."""
    if METRIC_NAME_LABEL not in labels:
        return labels
    hit = _NAME_CACHE.get(labels)
    if hit is None:
        if len(_NAME_CACHE) > 200_000:
            _NAME_CACHE.clear()
        hit = _NAME_CACHE[labels] = labels.without(METRIC_NAME_LABEL)
    return hit


_MEMO: dict[tuple[Labels, bool, frozenset[str]], Labels] = {}


def _memo(labels: Labels, drop: bool, names: frozenset[str]) -> Labels:
    key = (labels, drop, names)
    hit = _MEMO.get(key)
    if hit is None:
        if len(_MEMO) > 500_000:
            _MEMO.clear()
        items = labels.items_tuple
        hit = _MEMO[key] = Labels((k, v) for k, v in items if (k in names) != drop)
    return hit


def without_labels(labels: Labels, names: frozenset[str]) -> Labels:
    """``labels`` without ``names`` (memoised: the same series come back every step and round)."""
    return _memo(labels, True, names)


def keep_labels(labels: Labels, names: frozenset[str]) -> Labels:
    """Only the ``names`` of ``labels`` (memoised)."""
    return _memo(labels, False, names)


def check_unique(vec: Vector) -> Vector:
    """Raise Prometheus's error when two samples share a label set."""
    if len({labels for labels, _ in vec}) != len(vec):
        raise EvalError("vector cannot contain metrics with the same labelset")
    return vec
