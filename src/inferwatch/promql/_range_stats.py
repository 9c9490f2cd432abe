"""``min``, ``max``, ``quantile`` and ``count_values`` over all steps of a range query, without a member loop.

The instant fold (:mod:`._aggregate`) takes members one by one; these four need
no running arithmetic, only which member wins or how many share a value, so they
are answered from sorted or reduced arrays, vectorised across members, groups and
steps at once (``min by (shard)`` over 50,000 series was 500 slot-by-slot passes,
``min`` over them 50,000; ``count_values`` went step by step, ~60 s).

- ``max``/``min``: Prometheus keeps the first member and replaces it by a strictly
  greater (smaller) one, or whenever it holds NaN. So the answer is the first
  member, in row order, equal to the greatest non-NaN value (that picks the sign of
  a zero as the fold does), or, where all are NaN, the last NaN.
- ``quantile``: the members sorted NaN first, then ascending, ties in row order
  (:func:`._kernels.quantile`'s stable sort), then the same rank and interpolation.
- ``count_values``: each distinct value's label text once, then a count per
  (group, text) and step.
"""

from __future__ import annotations

import math

import numpy as np

from inferwatch.model import METRIC_NAME_LABEL, Labels
from inferwatch.promql._aggregate import format_value_label
from inferwatch.promql._rows import Fallback, Rows

__all__ = ["count_values_rows", "extreme_rows", "quantile_rows"]

_BIG = np.iinfo(np.int64).max


def extreme_rows(biggest: bool, rows: Rows, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``max`` (``biggest``) or ``min`` per group and step; ``order``/``starts``: rows sorted by group."""
    x, m = rows.vals[order], rows.mask[order]
    nan = np.isnan(x)
    real = m & ~nan
    with np.errstate(invalid="ignore"):
        fill = -np.inf if biggest else np.inf
        best = (np.maximum if biggest else np.minimum).reduceat(np.where(real, x, fill), starts, axis=0)
    if not (m & (nan | (x == 0))).any():  # equal values are equal bits: the value is the answer
        return best
    has_real = np.logical_or.reduceat(real, starts, axis=0)
    pos = np.arange(len(order))[:, None]
    seg = np.repeat(np.arange(len(starts)), np.diff([*starts.tolist(), len(order)]))
    winner = real & (x == best[seg])
    first = np.minimum.reduceat(np.where(winner, pos, _BIG), starts, axis=0)
    last_nan = np.maximum.reduceat(np.where(m, pos, -1), starts, axis=0)
    pick = np.where(has_real, first, np.maximum(last_nan, 0))
    pick = np.minimum(pick, len(order) - 1)
    return np.take_along_axis(x, pick, axis=0) if len(order) else np.zeros_like(best)


def quantile_rows(q: np.ndarray, rows: Rows, order: np.ndarray, starts: np.ndarray,
                  present: np.ndarray) -> np.ndarray:
    """``quantile(q)`` per group and step (``q`` per step), the instant kernel's arithmetic."""
    out = np.full(present.shape, math.nan)
    ends = [*starts[1:].tolist(), len(order)]
    for g, (a, b) in enumerate(zip(starts.tolist(), ends, strict=True)):
        mem = order[a:b]
        x, m = rows.vals[mem], rows.mask[mem]
        nan = np.isnan(x)
        kind = np.where(m, np.where(nan, 0, 1), 2)  # NaN first, then the values, the absent last
        idx = np.lexsort((np.where(kind == 1, x, 0.0), kind), axis=0)  # stable: ties keep row order
        vs = np.take_along_axis(x, idx, axis=0)
        n = m.sum(axis=0)
        with np.errstate(invalid="ignore"):
            rank = q * (n - 1)
            fl = np.floor(np.where(np.isfinite(rank), rank, 0.0))
            lo = np.maximum(0, fl).astype(np.int64)
            hi = np.minimum(n - 1, lo + 1)
            weight = rank - fl
            cols = np.arange(x.shape[1])
            lo, hi = np.minimum(lo, len(mem) - 1), np.clip(hi, 0, len(mem) - 1)
            val = vs[lo, cols] * (1 - weight) + vs[hi, cols] * weight
        val = np.where(q < 0, -math.inf, np.where(q > 1, math.inf, val))
        out[g] = np.where(np.isnan(q) | (n == 0), math.nan, val)
    return out


def count_values_rows(label: str, without: bool, grouping: tuple[str, ...], rows: Rows,
                      base: np.ndarray, base_labels: list[Labels]) -> Rows:
    """``count_values(label, ...)``: ``base`` is each row's group without the value label."""
    if not label.isidentifier() or not label.isascii():
        raise Fallback("invalid count_values label")  # the error, at the step it arises
    steps = rows.vals.shape[1]
    r, j = np.nonzero(rows.mask)
    if not len(r):
        return Rows.empty(steps)
    dropped = without and (label in grouping or label == METRIC_NAME_LABEL)
    if dropped:  # the value label is dropped again: one count per group
        vid, texts = np.zeros(len(r), dtype=np.int64), [""]
    else:
        bits, inverse = np.unique(rows.vals[r, j].view(np.uint64), return_inverse=True)
        index: dict[str, int] = {}
        text_id = np.array([index.setdefault(format_value_label(v), len(index))
                            for v in bits.view(np.float64).tolist()], dtype=np.int64)
        vid, texts = text_id[inverse.ravel()], list(index)
    code = base[r] * len(texts) + vid
    keys, out_id = np.unique(code, return_inverse=True)
    out_id = out_id.ravel()
    counts = np.zeros((len(keys), steps))
    np.add.at(counts, (out_id, j), 1.0)
    labels = []
    for k in keys.tolist():
        g, t = divmod(k, len(texts))
        if dropped:
            labels.append(base_labels[g])
        else:  # the value label replaces one the series has
            rest = [(n, v) for n, v in base_labels[g].items_tuple if n != label]
            labels.append(Labels([*rest, (label, texts[t])]))
    return Rows(labels, counts, counts > 0, ordered=False)
