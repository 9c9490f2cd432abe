"""Instant evaluation of the PromQL subset over a :class:`~inferwatch.store.Store`.

Selection follows Prometheus 2.42 (promql/engine.go): an instant selector
takes each series' latest sample in ``[t - 5m, t]`` and drops the series when
that sample is a staleness marker; a range selector takes the samples in
``[t - range, t]`` with staleness markers removed. Times are compared in
integer milliseconds, as Prometheus stores them.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from inferwatch.model import METRIC_NAME_LABEL, Labels, Matcher
from inferwatch.rules._functions import bucket_quantile, extrapolated_rate, go_div, go_mean, over_time
from inferwatch.rules._promql import Aggregate, Binary, Call, Expr, Number, Selector
from inferwatch.store import Store

__all__ = ["LOOKBACK_S", "EvalError", "LabelMemo", "QueryEngine", "Vector"]

LOOKBACK_S = 300.0
_STALE_BITS = np.uint64(0x7FF0000000000002)

Vector = list[tuple[Labels, float]]
_Matrix = list[tuple[Labels, np.ndarray, np.ndarray]]


class EvalError(Exception):
    """An expression could not be evaluated (e.g. many-to-many matching)."""


_ARITH: dict[str, Callable[[float, float], float]] = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": go_div,
}
_CMP: dict[str, Callable[[float, float], bool]] = {
    "==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt,
    ">=": operator.ge, "<=": operator.le,
}


def _live(t: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t_ms = np.rint(t * 1000.0).astype(np.int64)
    stale = v.view(np.uint64) == _STALE_BITS
    return t_ms, stale


class LabelMemo:
    """Memoised label-set transforms; series labels repeat across rules and rounds.

    Building a :class:`Labels` sorts its pairs, which dominated evaluation
    time; the evaluator keeps one memo across rounds (bounded: cleared when
    it grows past ``limit`` entries).
    """

    def __init__(self, limit: int = 1_000_000) -> None:
        self.limit = limit
        self._m: dict[tuple[Labels, bool, tuple[str, ...]], Labels] = {}

    def without(self, labels: Labels, *names: str) -> Labels:
        """``labels.without(*names)``, memoised."""
        return self._get(labels, True, names)

    def keep(self, labels: Labels, names: tuple[str, ...]) -> Labels:
        """``labels.keep(names)``, memoised."""
        return self._get(labels, False, names)

    def _get(self, labels: Labels, drop: bool, names: tuple[str, ...]) -> Labels:
        key = (labels, drop, names)
        hit = self._m.get(key)
        if hit is None:
            if len(self._m) >= self.limit:
                self._m.clear()
            hit = self._m[key] = labels.without(*names) if drop else labels.keep(names)
        return hit


@dataclass
class QueryEngine:
    """Evaluates expressions at one instant; selections are cached per ``(selector, t)``.

    One engine serves one evaluation round, so the selector shared by several
    rules (e.g. ``inferwatch_requests_total[1m]``) is read from the store once.
    """

    store: Store
    lookback: float = LOOKBACK_S
    memo: LabelMemo = field(default_factory=LabelMemo)
    _cache: dict[tuple[tuple[Matcher, ...], float | None, int], object] = field(default_factory=dict)

    def instant(self, expr: Expr, t: float) -> Vector | float:
        """The value of ``expr`` at time ``t`` (Unix seconds): a vector or a scalar."""
        return self._eval(expr, round(t * 1000))

    def _eval(self, e: Expr, ts: int) -> Vector | float:
        if isinstance(e, Number):
            return e.value
        if isinstance(e, Selector):
            return self._instant_selector(e, ts)
        if isinstance(e, Call):
            return self._call(e, ts)
        if isinstance(e, Aggregate):
            inner = self._eval(e.expr, ts)
            if not isinstance(inner, list):
                raise EvalError(f"{e.op}() needs a vector, got a scalar")
            return _aggregate(e, inner, self.memo)
        return self._binary(e, ts)

    def _instant_selector(self, sel: Selector, ts: int) -> Vector:
        key = (sel.matchers, None, ts)
        hit = self._cache.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        lo = ts - round(self.lookback * 1000)
        out: Vector = []
        for s in self.store.select(sel.matchers, lo / 1000 - 0.001, ts / 1000 + 0.001):
            t_ms, stale = _live(s.t, s.v)
            i = int(np.searchsorted(t_ms, ts, side="right")) - 1
            if i < 0 or t_ms[i] < lo or stale[i]:
                continue
            out.append((s.labels, float(s.v[i])))
        self._cache[key] = out
        return out

    def _range_selector(self, sel: Selector, ts: int) -> _Matrix:
        key = (sel.matchers, sel.range, ts)
        hit = self._cache.get(key)
        if hit is not None:
            return hit  # type: ignore[return-value]
        assert sel.range is not None
        lo = ts - round(sel.range * 1000)
        out: _Matrix = []
        for s in self.store.select(sel.matchers, lo / 1000 - 0.001, ts / 1000 + 0.001):
            t_ms, stale = _live(s.t, s.v)
            keep = (t_ms >= lo) & (t_ms <= ts) & ~stale
            if keep.any():
                out.append((s.labels, t_ms[keep], s.v[keep]))
        self._cache[key] = out
        return out

    def _call(self, c: Call, ts: int) -> Vector:
        if c.func == "histogram_quantile":
            q = c.args[0]
            assert isinstance(q, Number)
            inner = self._eval(c.args[1], ts)
            if not isinstance(inner, list):
                raise EvalError("histogram_quantile() needs a vector")
            return _histogram_quantile(q.value, inner, self.memo)
        sel = c.args[0]
        assert isinstance(sel, Selector) and sel.range is not None
        lo = ts - round(sel.range * 1000)
        out: Vector = []
        for labels, t_ms, v in self._range_selector(sel, ts):
            if c.func in ("rate", "increase"):
                r = extrapolated_rate(t_ms, v, lo, ts, sel.range, is_rate=c.func == "rate")
            else:
                r = over_time(c.func, v)
            if r is not None:
                out.append((self.memo.without(labels, METRIC_NAME_LABEL), r))
        return out

    def _binary(self, b: Binary, ts: int) -> Vector | float:
        lhs, rhs = self._eval(b.lhs, ts), self._eval(b.rhs, ts)
        cmp = _CMP.get(b.op)
        if not isinstance(lhs, list) and not isinstance(rhs, list):
            if cmp is None:
                return _ARITH[b.op](lhs, rhs)
            if not b.bool_:
                raise EvalError("comparisons between scalars must use the bool modifier")
            return 1.0 if cmp(lhs, rhs) else 0.0
        if b.op == "or":
            if not isinstance(lhs, list) or not isinstance(rhs, list):
                raise EvalError("set operator 'or' needs vectors on both sides")
            return _vector_or(lhs, rhs, self.memo)
        if isinstance(lhs, list) and isinstance(rhs, list):
            return _vector_binop(b, lhs, rhs, self.memo)
        return _scalar_binop(b, lhs, rhs, self.memo)


def _result(
    b: Binary, labels: Labels, value: float, keep: bool, memo: LabelMemo
) -> tuple[Labels, float] | None:
    if b.op in _CMP and not b.bool_:
        return (labels, value) if keep else None
    if b.op in _CMP:
        value = 1.0 if keep else 0.0
    return memo.without(labels, METRIC_NAME_LABEL), value


def _apply(b: Binary, lv: float, rv: float) -> tuple[float, bool]:
    cmp = _CMP.get(b.op)
    if cmp is None:
        return _ARITH[b.op](lv, rv), True
    return lv, cmp(lv, rv)


def _vector_binop(b: Binary, lhs: Vector, rhs: Vector, memo: LabelMemo) -> Vector:
    if not lhs or not rhs:
        return []
    right: dict[Labels, tuple[Labels, float]] = {}
    for labels, v in rhs:
        sig = memo.without(labels, METRIC_NAME_LABEL)
        if sig in right:
            raise EvalError(f"found duplicate series for the match group {sig} on the right hand-side "
                            f"of the operation: [{labels}, {right[sig][0]}]")
        right[sig] = (labels, v)
    out: Vector = []
    seen: set[Labels] = set()
    for labels, lv in lhs:
        match = right.get(memo.without(labels, METRIC_NAME_LABEL))
        if match is None:
            continue
        value, keep = _apply(b, lv, match[1])
        res = _result(b, labels, value, keep, memo)
        if res is None:
            continue
        if res[0] in seen:
            raise EvalError(f"multiple matches for labels {res[0]}: many-to-one matching must be explicit")
        seen.add(res[0])
        out.append(res)
    return out


def _vector_or(lhs: Vector, rhs: Vector, memo: LabelMemo) -> Vector:
    """``lhs or rhs``: all of lhs, plus rhs series whose labels (but the name) match none of lhs."""
    sigs = {memo.without(labels, METRIC_NAME_LABEL) for labels, _ in lhs}
    return lhs + [(labels, v) for labels, v in rhs if memo.without(labels, METRIC_NAME_LABEL) not in sigs]


def _scalar_binop(b: Binary, lhs: Vector | float, rhs: Vector | float, memo: LabelMemo) -> Vector:
    swap = not isinstance(lhs, list)
    vec, scalar = (rhs, lhs) if swap else (lhs, rhs)
    assert isinstance(vec, list) and not isinstance(scalar, list)
    out: Vector = []
    for labels, v in vec:
        lv, rv = (scalar, v) if swap else (v, scalar)
        value, keep = _apply(b, lv, rv)
        if b.op in _CMP and swap:
            value = v
        res = _result(b, labels, value, keep, memo)
        if res is not None:
            out.append(res)
    return out


def _aggregate(e: Aggregate, vec: Vector, memo: LabelMemo) -> Vector:
    groups: dict[Labels, list[float]] = {}
    for labels, v in vec:
        if e.without:
            key = memo.without(labels, METRIC_NAME_LABEL, *e.grouping)
        else:
            key = memo.keep(labels, e.grouping)
        groups.setdefault(key, []).append(v)
    return [(k, _reduce(e.op, vs)) for k, vs in groups.items()]


def _reduce(op: str, vs: Sequence[float]) -> float:
    if op == "count":
        return float(len(vs))
    if op == "avg":
        return go_mean(vs)
    out = vs[0]
    for x in vs[1:]:
        if op == "sum":
            out += x
        elif (op == "max" and (out < x or math.isnan(out))) or (op == "min" and (out > x or math.isnan(out))):
            out = x
    return out


def _histogram_quantile(q: float, vec: Vector, memo: LabelMemo) -> Vector:
    groups: dict[Labels, tuple[Labels, list[tuple[float, float]]]] = {}
    for labels, v in vec:
        try:
            ub = float(labels.get("le", ""))
        except ValueError:
            continue
        sig = memo.without(labels, "le")
        if sig not in groups:
            groups[sig] = (memo.without(labels, METRIC_NAME_LABEL, "le"), [])
        groups[sig][1].append((ub, v))
    return [(out_labels, bucket_quantile(q, buckets)) for out_labels, buckets in groups.values()]
