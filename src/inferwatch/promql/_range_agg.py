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
from inferwatch.promql._aggregate import group_key
from inferwatch.promql._ast import Aggregate
from inferwatch.promql._kernels import bucket_quantile
from inferwatch.promql._range_stats import count_values_rows, extreme_rows, quantile_rows
from inferwatch.promql._rows import Fallback, Rows, consistent_order
from inferwatch.promql._values import without_labels

__all__ = ["aggregate_rows", "groups_of", "histogram_quantile_rows"]

_IN_ORDER = frozenset({"sum", "avg", "min", "max", "stddev", "stdvar", "quantile", "topk", "bottomk"})
_BY_SEGMENT = frozenset({"count", "group", "max", "min", "quantile"})  # no member-by-member fold
_LE = frozenset({"le"})
_LE_AND_NAME = frozenset({"le", METRIC_NAME_LABEL})
_BLOCK_CELLS = 1 << 19


def _slots(gid: np.ndarray, groups: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(rows, their groups)`` for the first member of each group, then the second, ...

    One sort, then one slice per slot: the cost is the rows, not the rows times the slots
    (a single group of 50,000 series used to compare 50,000 positions 50,000 times).
    """
    order = np.argsort(gid, kind="stable")
    sg = gid[order]
    pos = np.arange(len(order)) - np.searchsorted(sg, np.arange(groups))[sg]
    by_pos = np.argsort(pos, kind="stable")  # within a slot, still in group order
    cuts = np.searchsorted(pos[by_pos], np.arange(int(pos.max()) + 2 if len(pos) else 0))
    rows, grp = order[by_pos], sg[by_pos]
    for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist(), strict=True):
        yield rows[a:b], grp[a:b]


def _segments(gid: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows sorted by group (stable, so in row order within one) and where each group starts."""
    order = np.argsort(gid, kind="stable")
    return order, np.searchsorted(gid[order], np.arange(groups))


def _presence(rows: Rows, order: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per group and step: how many members are present, and the first present member's row."""
    if len(starts) == 1:  # one group (``count(x > 0.5)``): its rows in order, no copy in group order
        m = rows.mask
        cnt = np.count_nonzero(m, axis=0).astype(np.int64)[None, :]
        return cnt, np.where(cnt > 0, np.argmax(m, axis=0)[None, :], -1)
    m = rows.mask[order]
    cnt = np.add.reduceat(m.astype(np.int64), starts, axis=0)
    big = np.iinfo(np.int64).max
    first = np.minimum.reduceat(np.where(m, order[:, None], big), starts, axis=0)
    return cnt, np.where(cnt > 0, first, -1)


def _sum_by_group(rows: Rows, order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``sum`` per group: each group's members added in row order (``accumulate`` is sequential,
    as the instant fold is); an absent member adds -0.0, which changes no float, signed zeros too."""
    x = np.where(rows.mask, rows.vals, -0.0)[order]
    ends = [*starts[1:].tolist(), len(order)]
    out = np.empty((len(starts), x.shape[1]))
    for g, (a, b) in enumerate(zip(starts.tolist(), ends, strict=True)):
        acc = np.full(x.shape[1], -0.0)
        for c in range(a, b, 4096):  # blocks, so the running sums held stay small
            acc = np.add.accumulate(np.vstack([acc[None, :], x[c:min(b, c + 4096)]]), axis=0)[-1]
        out[g] = acc
    return out


def aggregate_rows(e: Aggregate, rows: Rows, param: np.ndarray | str | None, poll: Callable[[], None],
                   groups: tuple[np.ndarray, list[Labels]] | None = None) -> Rows:
    """The aggregation ``e`` of ``rows`` at every step (``param``: k or q per step; ``groups``: each
    row's group number and the groups' labels, when the caller knows them)."""
    steps = rows.vals.shape[1]
    if e.op in _IN_ORDER and not rows.ordered:
        raise Fallback(e.op)
    if e.op == "count_values":
        assert isinstance(param, str)
        base = e if e.without else Aggregate(e.op, e.expr, tuple(g for g in e.grouping if g != param), False)
        gid, glabels = groups_of(base, rows.labels)
        return count_values_rows(param, e.without, e.grouping, rows, gid, glabels)
    gid, glabels = groups_of(e, rows.labels) if groups is None else groups
    if not glabels:
        return Rows.empty(steps)
    if e.op in ("topk", "bottomk"):
        assert isinstance(param, np.ndarray)
        return _top(e.op == "topk", rows, gid, len(glabels), param)
    g = len(glabels)
    if e.op in _BY_SEGMENT or (e.op == "sum" and g < len(gid) // g):
        order, starts = _segments(gid, g)
        cnt, first = _presence(rows, order, starts)
        present = cnt > 0
        poll()
        if e.op in ("max", "min"):
            acc = extreme_rows(e.op == "max", rows, order, starts)
        elif e.op == "quantile":
            assert isinstance(param, np.ndarray)
            acc = quantile_rows(param, rows, order, starts, present)
        elif e.op == "count":
            acc = cnt.astype(np.float64)
        elif e.op == "group":
            acc = np.ones((g, steps))
        else:
            poll()
            with np.errstate(all="ignore"):  # inf - inf is NaN here as in the instant fold
                acc = _sum_by_group(rows, order, starts)
        return Rows(glabels, acc, present, consistent_order(first, present))
    if e.op == "avg" and _dense(rows):
        return _mean_dense(rows, gid, glabels, poll)
    return _fold(e, rows, gid, glabels, param, poll)


_SAFE = 1e307  # |values| below this: a running mean of them cannot overflow (|a + (x/c - a/c)| < 2e307)


def _dense(rows: Rows) -> bool:
    """Whether every row has a value at every step, none of them NaN or near infinity."""
    v = rows.vals
    return bool(v.size and rows.mask.all() and v.max() < _SAFE and v.min() > -_SAFE)  # NaN compares False


def _mean_dense(rows: Rows, gid: np.ndarray, glabels: list[Labels], poll: Callable[[], None]) -> Rows:
    """``avg`` over :func:`_dense` rows: :func:`_fold`'s incremental mean (bit for bit) without its masks,
    counts and infinity checks, which such rows never need; in place where a slot holds every group.

    A dashboard's ``avg by (shard) (load_gauge)`` over 50,000 series made some twenty small numpy
    calls per member slot, each holding the interpreter; this makes four.
    """
    g, steps = len(glabels), rows.vals.shape[1]
    acc = np.empty((g, steps))
    first = np.empty(g, dtype=np.int64)
    for n, (rs, gs) in enumerate(_slots(gid, g)):
        poll()
        x = rows.vals[rs]
        if n == 0:  # every group's first member: the mean so far is its value
            acc[gs], first[gs] = x, rs
        elif len(gs) == g:
            acc += x / (n + 1) - acc / (n + 1)
        else:
            a = acc[gs]
            acc[gs] = a + (x / (n + 1) - a / (n + 1))
    present = np.ones((g, steps), dtype=bool)
    return Rows(glabels, acc, present, consistent_order(np.repeat(first[:, None], steps, axis=1), present))


_KEPT: dict[tuple[int, tuple[str, ...], bool], tuple[list[Labels], np.ndarray, list[Labels]]] = {}
_KEEP_WIDER = 1024  # lists of more label sets than this keep their groups (a few of them)


def groups_of(e: Aggregate, labels: list[Labels]) -> tuple[np.ndarray, list[Labels]]:
    """Each row's group number and the groups' label sets, in order of first member.

    Kept for a few wide label lists, keyed by the list object: the store hands the same
    list while the same series match (every rule round, every dashboard refresh), so
    50,000 label sets are cut once rather than every time.
    """
    if not e.without and not e.grouping:  # one group: no key to build per series
        return np.zeros(len(labels), dtype=np.int64), [Labels()] if labels else []
    kept = (id(labels), e.grouping, e.without)
    hit = _KEPT.pop(kept, None)
    if hit is not None and hit[0] is labels:
        _KEPT[kept] = hit  # the most recently used now (the least recently used goes first)
        return hit[1], list(hit[2])
    key = group_key(e)
    index: dict[Labels, int] = {}
    gid = np.array([index.setdefault(key(ls), len(index)) for ls in labels], dtype=np.int64)
    if len(labels) > _KEEP_WIDER:
        gid.flags.writeable = False
        if len(_KEPT) >= 8:
            _KEPT.pop(next(iter(_KEPT)), None)
        _KEPT[kept] = (labels, gid, list(index))
    return gid, list(index)


def _fold(e: Aggregate, rows: Rows, gid: np.ndarray, glabels: list[Labels], param: np.ndarray | str | None,
          poll: Callable[[], None]) -> Rows:
    """The aggregation folded member slot by member slot, vectorised across groups and steps."""
    g, steps = len(glabels), rows.vals.shape[1]
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
            else:
                raise Fallback(op)
            acc[gs] = np.where(m, new, a)
            cnt[gs] = np.where(m, c, c - 1)
            present[gs] |= m
        if op == "stdvar":
            acc = acc / cnt
        elif op == "stddev":
            acc = np.sqrt(acc / cnt)
    return Rows(glabels, acc, present, consistent_order(first, present))


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
    order, starts = _segments(gid, groups)
    for mem in np.split(order, starts[1:]):  # each group's rows, in row order
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
    if live.all():
        return _top_dense(top, k, x)
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


def _top_dense(top: bool, k: int, x: np.ndarray) -> np.ndarray:
    """:func:`_top_block` where every member has a value, none NaN: the k-th value found in ``x`` itself
    (no key array), and the members beyond it plus those equal to it (at most the k still needed, or
    Prometheus's heap decides: step by step)."""
    kth = np.partition(x, len(x) - k if top else k - 1, axis=0)[len(x) - k if top else k - 1]
    beyond = x > kth if top else x < kth
    ties = x == kth
    if np.any(ties.sum(axis=0) > k - beyond.sum(axis=0)):
        raise Fallback("topk/bottomk with ties at the k-th value")
    out: np.ndarray = beyond | ties
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
