"""Aggregations and ``histogram_quantile`` over all steps of a range query at once.

Groups are folded member by member in row order, vectorised across groups
and steps: the k-th member of every group at once, absent members skipped,
so each step sees exactly the sequence of additions (or Welford updates, or
comparisons) that the instant evaluator (:mod:`._aggregate`) performs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np

from inferwatch.model import METRIC_NAME_LABEL, Labels
from inferwatch.promql._aggregate import _group_key
from inferwatch.promql._ast import Aggregate
from inferwatch.promql._kernels import bucket_quantile, quantile
from inferwatch.promql._rows import Fallback, Rows, consistent_order
from inferwatch.promql._values import without_labels

__all__ = ["aggregate_rows", "histogram_quantile_rows"]

_IN_ORDER = frozenset({"sum", "avg", "min", "max", "stddev", "stdvar", "quantile", "topk", "bottomk"})
_LE = frozenset({"le"})
_LE_AND_NAME = frozenset({"le", METRIC_NAME_LABEL})
_BLOCK_CELLS = 1 << 19


def _slots(gid: np.ndarray, groups: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(rows, their groups)`` for the first member of each group, then the second, ..."""
    order = np.argsort(gid, kind="stable")
    sg = gid[order]
    pos = np.arange(len(order)) - np.searchsorted(sg, np.arange(groups))[sg]
    for k in range(int(pos.max()) + 1 if len(pos) else 0):
        sel = pos == k
        yield order[sel], sg[sel]


def aggregate_rows(e: Aggregate, rows: Rows, param: np.ndarray | str | None,
                   poll: Callable[[], None]) -> Rows:
    """The aggregation ``e`` of ``rows`` at every step (``param``: k or q per step)."""
    steps = rows.vals.shape[1]
    if e.op == "count_values" or (e.op in _IN_ORDER and not rows.ordered):
        raise Fallback(e.op)
    key = _group_key(e)
    index: dict[Labels, int] = {}
    gid = np.array([index.setdefault(key(ls), len(index)) for ls in rows.labels], dtype=np.int64)
    glabels = list(index)
    if not glabels:
        return Rows.empty(steps)
    if e.op in ("topk", "bottomk"):
        assert isinstance(param, np.ndarray)
        return _top(e.op == "topk", rows, gid, len(glabels), param)
    g = len(glabels)
    acc = np.zeros((g, steps))
    mean = np.zeros((g, steps))
    cnt = np.zeros((g, steps), dtype=np.int64)
    present = np.zeros((g, steps), dtype=bool)
    first = np.full((g, steps), -1, dtype=np.int64)
    op = e.op
    with np.errstate(all="ignore"):
        for rs, gs in _slots(gid, g):
            poll()
            x, m = rows.vals[rs], rows.mask[rs]
            st, a, c = present[gs], acc[gs], cnt[gs] + 1
            first[gs] = np.where(m & ~st, rs[:, None], first[gs])
            if op == "sum":
                new = np.where(st, a + x, x)
            elif op == "avg":
                skip = np.isinf(a) & ((np.isinf(x) & ((a > 0) == (x > 0))) | np.isfinite(x))
                new = np.where(st, np.where(skip, a, a + (x / c - a / c)), x)
            elif op in ("max", "min"):
                better = (x > a) if op == "max" else (x < a)
                new = np.where(st & ~(better | np.isnan(a)), a, x)
            elif op in ("stdvar", "stddev"):
                mu = mean[gs]
                delta = x - mu
                mu2 = mu + delta / c
                new = a + delta * (x - mu2)
                mean[gs] = np.where(m, mu2, mu)
            elif op in ("count", "group", "quantile"):
                new = a
            else:
                raise Fallback(op)
            acc[gs] = np.where(m, new, a)
            cnt[gs] = np.where(m, c, c - 1)
            present[gs] |= m
        if op == "count":
            acc = cnt.astype(np.float64)
        elif op == "group":
            acc = np.ones((g, steps))
        elif op == "stdvar":
            acc = acc / cnt
        elif op == "stddev":
            acc = np.sqrt(acc / cnt)
        elif op == "quantile":
            assert isinstance(param, np.ndarray)
            acc = _quantile(param, rows, gid, present)
    return Rows(glabels, acc, present, consistent_order(first, present))


def _quantile(q: np.ndarray, rows: Rows, gid: np.ndarray, present: np.ndarray) -> np.ndarray:
    out = np.full(present.shape, math.nan)
    members = [np.flatnonzero(gid == g) for g in range(len(present))]
    for g, j in zip(*np.nonzero(present), strict=True):
        mem = members[g]
        vs = rows.vals[mem, j][rows.mask[mem, j]].tolist()
        out[g, j] = quantile(float(q[j]), vs)
    return out


def _top(top: bool, rows: Rows, gid: np.ndarray, groups: int, param: np.ndarray) -> Rows:
    if not np.all(param == param[0]) and not np.isnan(param).all():
        raise Fallback("k changes over the range")
    k0 = float(param[0])
    mask = np.zeros_like(rows.mask)
    if not -9.223372036854775808e18 <= k0 <= 9.223372036854775807e18:
        raise Fallback("k overflows int64")  # the error, at the step it arises
    if k0 < 1:
        return Rows.empty(rows.vals.shape[1])
    k = int(k0)
    for g in range(groups):
        mem = np.flatnonzero(gid == g)
        m = rows.mask[mem]
        if k >= len(mem):
            mask[mem] = m
            continue
        width = max(1, _BLOCK_CELLS // len(mem))  # steps at a time, so temporaries stay small
        for j in range(0, m.shape[1], width):
            mask[mem, j:j + width] = _top_block(top, k, rows.vals[mem, j:j + width], m[:, j:j + width])
    return Rows(rows.labels, rows.vals, mask, ordered=False).compact()


def _top_block(top: bool, k: int, x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Which members ``topk``/``bottomk`` keeps per step: the k best values.

    Where that is not one set (ties at the k-th value, or NaN among more than k members),
    which ones Prometheus keeps depends on its heap's swaps: those ranges go step by step.
    """
    nan = np.isnan(x)
    live = m & ~nan
    with np.errstate(all="ignore"):
        key = np.where(live, -x if top else x, np.inf)
    kth = np.partition(key, k - 1, axis=0)[k - 1]
    less = live & (key < kth)
    ties = live & (key == kth)
    need = k - less.sum(axis=0)
    if np.any((ties.sum(axis=0) > need) & (need > 0)) or np.any((m & nan).any(axis=0) & (m.sum(axis=0) > k)):
        raise Fallback("topk/bottomk with ties at the k-th value")
    sel = less | (ties & (np.cumsum(ties, axis=0) <= need))
    left = k - sel.sum(axis=0)
    nans = m & nan
    out: np.ndarray = sel | (nans & (np.cumsum(nans, axis=0) <= left))
    return out


def histogram_quantile_rows(q: np.ndarray, rows: Rows, poll: Callable[[], None]) -> Rows:
    """``histogram_quantile(q, rows)`` at every step (``bucket_quantile`` per group and step)."""
    steps = rows.vals.shape[1]
    if not rows.ordered:
        raise Fallback("histogram_quantile over an unordered vector")
    index: dict[Labels, int] = {}
    members: list[list[tuple[float, int]]] = []
    for i, ls in enumerate(rows.labels):
        try:
            ub = float(ls["le"])
        except (KeyError, ValueError):
            continue
        g = index.setdefault(without_labels(ls, _LE), len(index))
        if g == len(members):
            members.append([])
        members[g].append((ub, i))
    labels = [without_labels(ls, _LE_AND_NAME) for ls in index]
    if len(set(labels)) != len(labels):
        raise Fallback("histograms differing only by name")  # an error at each step where both are
    out = np.full((len(index), steps), math.nan)
    present = np.zeros((len(index), steps), dtype=bool)
    first = np.full((len(index), steps), -1, dtype=np.int64)
    for g, mem in enumerate(members):
        poll()
        idx = np.array([i for _, i in mem])
        m = rows.mask[idx]
        present[g] = m.any(axis=0)
        first[g] = np.where(present[g], idx[np.argmax(m, axis=0)], -1)
        full = np.flatnonzero(m.all(axis=0))
        if len(full):
            out[g, full] = _bucket_quantiles(q[full], sorted(mem, key=lambda b: b[0]), rows.vals[:, full])
        for j in np.flatnonzero(present[g] & ~m.all(axis=0)).tolist():
            out[g, j] = bucket_quantile(float(q[j]), [(ub, float(rows.vals[i, j])) for ub, i in mem
                                                      if rows.mask[i, j]])
    return Rows(labels, out, present, consistent_order(first, present))


def _bucket_quantiles(q: np.ndarray, buckets: list[tuple[float, int]], vals: np.ndarray) -> np.ndarray:
    """``bucket_quantile`` for columns where every bucket is present, operation for operation."""
    bounds: list[float] = []
    counts: list[np.ndarray] = []
    for ub, i in buckets:
        if bounds and bounds[-1] == ub:
            counts[-1] = counts[-1] + vals[i]
        else:
            bounds.append(ub)
            counts.append(vals[i].copy())
    n = len(bounds)
    res = np.full(len(q), math.nan)
    if math.isinf(bounds[-1]) and bounds[-1] > 0 and n >= 2:
        top = counts[0]
        for i in range(1, n):
            b = counts[i]
            counts[i] = np.where(b > top, b, np.where(b < top, top, b))
            top = np.where(b > top, b, top)
        c = np.vstack(counts)
        edges = np.array(bounds)
        with np.errstate(all="ignore"):
            rank = q * c[-1]
            ge = c[:-1] >= rank
            idx = np.where(ge.any(axis=0), np.argmax(ge, axis=0), n - 1)
            cols = np.arange(len(q))
            prev = c[np.maximum(idx - 1, 0), cols]
            inner = idx > 0
            start = np.where(inner, edges[np.maximum(idx - 1, 0)], 0.0)
            end = edges[idx]
            count = np.where(inner, c[idx, cols] - prev, c[idx, cols])
            rank = np.where(inner, rank - prev, rank)
            val = start + (end - start) * (rank / count)
        val = np.where((idx == 0) & (edges[0] <= 0), edges[0], val)
        val = np.where(idx == n - 1, edges[-2], val)
        res = np.where(c[-1] == 0, math.nan, val)
    return np.where(np.isnan(q), math.nan, np.where(q < 0, -math.inf, np.where(q > 1, math.inf, res)))
