"""An instant vector at every step of a range query: one row per series, values and presence per step.

A range query evaluated step by step builds one Python list per step; the
range-aware evaluator keeps the same information as ``(rows, steps)`` numpy
arrays instead. ``ordered`` records whether, at every step, the step-by-step
evaluator's vector lists the present rows in row order: aggregations that add
floats in sequence (``sum``, ``avg``...) only run vectorised when it holds, so
their results stay bit-identical.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inferwatch.model import Labels

__all__ = ["Fallback", "Rows", "consistent_order"]


class Fallback(Exception):
    """This expression is evaluated step by step instead (a construct the vectorised path leaves out)."""


@dataclass
class Rows:
    """``labels[i]`` has value ``vals[i, j]`` at step ``j`` where ``mask[i, j]``."""

    labels: list[Labels]
    vals: np.ndarray
    mask: np.ndarray
    ordered: bool = True

    @classmethod
    def empty(cls, steps: int) -> Rows:
        """No series at any step."""
        return cls([], np.zeros((0, steps)), np.zeros((0, steps), dtype=bool))

    def compact(self) -> Rows:
        """Without the rows that are absent at every step."""
        if not len(self.labels):
            return self
        keep = self.mask.any(axis=1)
        if keep.all():
            return self
        idx = np.flatnonzero(keep)
        return Rows([self.labels[i] for i in idx.tolist()], self.vals[idx], self.mask[idx], self.ordered)

    def with_labels(self, labels: list[Labels]) -> Rows:
        """The same values under new labels (duplicates fall back: step-by-step checks them per step)."""
        if len(set(labels)) != len(labels):
            raise Fallback("duplicate labels")
        return Rows(labels, self.vals, self.mask, self.ordered)


def consistent_order(first: np.ndarray, present: np.ndarray) -> bool:
    """Whether groups listed in row order appear in that order at every step.

    ``first[g, j]`` is the index of the first member present at step ``j`` (the
    step-by-step evaluator creates groups in that order); ``present`` says
    whether group ``g`` exists at step ``j``.
    """
    if len(first) < 2:
        return True
    marked = np.where(present, first, -1)
    before = np.maximum.accumulate(marked, axis=0)[:-1]
    return bool(np.all(~present[1:] | (first[1:] > before)))
