"""Selecting samples for a query: the time span each selector needs, loaded once, then sliced per step.

Selection follows Prometheus 2.42 (promql/engine.go): an instant selector
takes each series' latest sample in ``[t - lookback, t]`` and drops the
series when that sample is a staleness marker; a range selector takes the
samples in ``[t - range, t]`` with staleness markers removed. Times are
integer milliseconds, as Prometheus stores them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from inferwatch.model import Labels, Matcher, check_deadline, deadline_checked
from inferwatch.promql._ast import Aggregate, Binary, Call, Expr, Paren, Selector, Subquery, Unary
from inferwatch.store import Series, Store

__all__ = ["Loaded", "Span", "instant_only", "load", "needed_spans", "resolve_at"]

_STALE_BITS = np.uint64(0x7FF0000000000002)
Span = tuple[int, int]


@dataclass(frozen=True, eq=False)
class Loaded:
    """One series' samples over a selector's span: all of them, and the live ones (no markers)."""

    labels: Labels
    t: np.ndarray
    v: np.ndarray
    stale: np.ndarray
    live_t: np.ndarray
    live_v: np.ndarray

    def at(self, ref: int, lookback: int) -> tuple[int, float] | None:
        """The latest sample in ``[ref - lookback, ref]`` unless it is a staleness marker."""
        i = int(self.t.searchsorted(ref, side="right")) - 1
        if i < 0 or self.t[i] < ref - lookback or self.stale[i]:
            return None
        return int(self.t[i]), float(self.v[i])

    def window(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Live samples with ``lo <= t <= hi``."""
        a = int(self.live_t.searchsorted(lo, side="left"))
        b = int(self.live_t.searchsorted(hi, side="right"))
        return self.live_t[a:b], self.live_v[a:b]


def resolve_at(sel: Selector | Subquery, start: int, end: int) -> int | None:
    """The ``@`` time of a selector or subquery in ms (``start()``/``end()`` resolved), or ``None``."""
    if sel.at is None:
        return None
    if sel.at.preprocessor == "start":
        return start
    if sel.at.preprocessor == "end":
        return end
    assert sel.at.time is not None
    return round(sel.at.time * 1000)


def _children(e: Expr) -> Iterator[Expr]:
    if isinstance(e, Call):
        yield from e.args
    elif isinstance(e, Aggregate):
        if e.param is not None:
            yield e.param
        yield e.expr
    elif isinstance(e, Binary):
        yield e.lhs
        yield e.rhs
    elif isinstance(e, Paren | Unary):
        yield e.expr


def needed_spans(root: Expr, start: int, end: int, lookback: int) -> dict[
        tuple[Matcher, ...], Span]:
    """For each selector's matchers, the ms span ``[lo, hi]`` a query from ``start`` to ``end`` reads."""
    out: dict[tuple[Matcher, ...], Span] = {}
    stack: list[tuple[Expr, int, int]] = [(root, start, end)]
    while stack:
        e, lo, hi = stack.pop()
        if isinstance(e, Selector | Subquery):
            at = resolve_at(e, start, end)
            if at is not None:
                lo = hi = at
            off = round(e.offset * 1000)
            lo, hi = lo - off, hi - off
            lo -= round(e.range * 1000) if e.range is not None else lookback
            if isinstance(e, Subquery):
                stack.append((e.expr, lo, hi))
                continue
            old = out.get(e.matchers)
            out[e.matchers] = (lo, hi) if old is None else (min(old[0], lo), max(old[1], hi))
            continue
        stack.extend((c, lo, hi) for c in _children(e))
    return out


def instant_only(root: Expr) -> set[tuple[Matcher, ...]]:
    """The matchers used by instant selectors only (no range selector, no subquery in the tree)."""
    instant: set[tuple[Matcher, ...]] = set()
    ranged: set[tuple[Matcher, ...]] = set()
    stack = [root]
    while stack:
        e = stack.pop()
        if isinstance(e, Subquery):
            return set()  # its selectors are read at many steps
        if isinstance(e, Selector):
            (instant if e.range is None else ranged).add(e.matchers)
        stack.extend(_children(e))
    return instant - ranged


def load(store: Store, matchers: tuple[Matcher, ...], span: Span, *, latest: bool = False) -> list[Loaded]:
    """The series matching ``matchers`` with their samples in ``span`` (ms, inclusive); ``latest``: only
    each series' last sample in it (all that one instant selector at ``span[1]`` picks from).

    The last is read through the store's ``select_latest`` where it has one (the head copies one sample
    a series instead of a lookback's worth), else cut from what ``select`` returns.
    """
    check_deadline()
    lo, hi = span[0] / 1000 - 0.001, span[1] / 1000 + 0.001
    reader = getattr(store, "select_latest", None) if latest else None
    selected = store.select(matchers, lo, hi) if reader is None else reader(matchers, lo, hi)
    if reader is not None and any(len(s.t) and round(s.t[-1] * 1000) > span[1] for s in selected):
        reader = None  # a sample within 1 ms after the span: its predecessor is the one, read them all
        selected = store.select(matchers, lo, hi)
    if latest and reader is None:
        selected = _last_inside(selected, span[1])
    check_deadline()
    if not selected:
        return []
    # One conversion over all the series' samples (a range query may read thousands of series).
    lens = np.array([len(s.t) for s in selected], dtype=np.int64)
    ends = np.cumsum(lens)
    ms = np.concatenate([s.t for s in selected], dtype=np.float64)
    ms *= 1000.0
    np.rint(ms, out=ms)
    t_all = ms.astype(np.int64)
    del ms
    v_all = np.concatenate([s.v for s in selected])
    stale_all = v_all.view(np.uint64) == _STALE_BITS
    starts = ends - lens
    if lens.all():
        marked = np.logical_or.reduceat(stale_all, starts)
    else:  # reduceat cannot express an empty series
        marked = np.array([stale_all[a:b].any() for a, b in zip(starts.tolist(), ends.tolist(), strict=True)])
    out: list[Loaded] = []
    # whether each series lies inside the span, for all at once (a numpy scalar compared per series cost more)
    inside = lens == 0
    if len(t_all):
        inside |= (t_all[np.minimum(starts, len(t_all) - 1)] >= span[0]) & (t_all[ends - 1] <= span[1])
    rows = zip(selected, starts.tolist(), ends.tolist(), lens.tolist(), marked.tolist(), inside.tolist(),
               strict=True)
    for s, start, end, n, any_stale, ok in deadline_checked(rows):
        t, v, stale = t_all[start:end], v_all[start:end], stale_all[start:end]
        has_stale = bool(n and any_stale)
        if not ok:
            keep = (t >= span[0]) & (t <= span[1])
            t, v, stale = t[keep], v[keep], stale[keep]
            has_stale = bool(stale.any())
        if has_stale:
            live = ~stale
            out.append(Loaded(s.labels, t, v, stale, t[live], v[live]))
        else:
            out.append(Loaded(s.labels, t, v, stale, t, v))
    return out


def _last_inside(selected: list[Series], hi_ms: int) -> list[Series]:
    """Each series' last sample at or before ``hi_ms`` (the store's read is a millisecond wider)."""
    out = []
    for s in selected:
        n = len(s.t)
        n = int(np.searchsorted(np.rint(s.t * 1000), hi_ms, side="right"))
        if n:
            out.append(Series(s.labels, s.t[n - 1:n], s.v[n - 1:n]))
    return out
