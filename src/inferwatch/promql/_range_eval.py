"""Range queries evaluated over all steps at once: each node's value for every step as numpy arrays.

The step-by-step evaluator (:class:`._engine.Evaluator`) answers a range query
as one instant query per step. This one walks the tree once: a scalar is an
array over the steps, an instant vector is :class:`._rows.Rows`. Selectors
read the samples the evaluator loaded once per query; windows, aggregations,
binary operators and ``histogram_quantile`` work on whole arrays, doing per
element exactly the arithmetic of the instant code, so the results are
identical. Whatever it does not cover (subqueries, ``count_values``, a few
functions, duplicate label sets that the instant path checks per step, any
evaluation error) raises :class:`._rows.Fallback`, and the query is run step
by step instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from inferwatch.model import Labels, deadline_checked
from inferwatch.promql._ast import (
    COMPARISONS,
    Aggregate,
    Binary,
    Call,
    Expr,
    Matching,
    Number,
    Paren,
    Selector,
    String,
    Subquery,
    Unary,
)
from inferwatch.promql._batch import StreamedBatch
from inferwatch.promql._binops import _ARITH, _CMP, _DROPS_NAME, _result_labels, _sig_fn
from inferwatch.promql._data import Loaded, resolve_at
from inferwatch.promql._engine import Evaluator
from inferwatch.promql._functions import _NP, VECTOR_FUNCTIONS, absent_labels
from inferwatch.promql._range_agg import aggregate_rows, histogram_quantile_rows
from inferwatch.promql._range_windows import instant_rows, sample_times, window_presence, window_rows
from inferwatch.promql._rows import Fallback, Rows
from inferwatch.promql._values import drop_name

__all__ = ["RangeEvaluator"]

RangeValue = np.ndarray | str | Rows
_NATIVE_ONLY = frozenset({"histogram_count", "histogram_sum", "histogram_fraction"})


def _unwrap(e: Expr) -> Expr:
    while isinstance(e, Paren):
        e = e.expr
    return e


class RangeEvaluator:
    """Evaluates an expression at ``steps`` (ms) over an :class:`Evaluator` whose data is loaded."""

    def __init__(self, ev: Evaluator, steps: np.ndarray, poll: Callable[[], None]) -> None:
        self.ev, self.steps, self.poll = ev, steps, poll
        self.n = len(steps)

    def series(self, e: Expr) -> list[tuple[Labels, list[tuple[float, float]]]]:
        """The range result: each label set's ``(t_seconds, value)`` points (unsorted)."""
        value = self.eval(e)
        ts = (self.steps / 1000).tolist()
        if isinstance(value, np.ndarray):
            return [(Labels(), list(zip(ts, value.tolist(), strict=True)))]
        assert isinstance(value, Rows)
        by: dict[Labels, list[int]] = {}
        for i, ls in enumerate(deadline_checked(value.labels)):
            by.setdefault(ls, []).append(i)
        out: list[tuple[Labels, list[tuple[float, float]]]] = []
        for ls, idx in deadline_checked(by.items()):
            mask = value.mask[idx]
            if len(idx) > 1:
                if (mask.sum(axis=0) > 1).any():
                    raise Fallback("a label set twice at one step")
                vals = value.vals[idx][np.argmax(mask, axis=0), np.arange(self.n)]
                mask = np.asarray(mask.any(axis=0))
            else:
                vals, mask = value.vals[idx[0]], mask[0]
            cols = np.flatnonzero(mask)
            if len(cols):
                out.append((ls, list(zip([ts[j] for j in cols.tolist()], vals[cols].tolist(), strict=True))))
        return out

    def eval(self, e: Expr) -> RangeValue:
        """The value of ``e`` at every step."""
        self.poll()
        if isinstance(e, Number):
            return np.full(self.n, e.value)
        if isinstance(e, String):
            return e.value
        if isinstance(e, Paren):
            return self.eval(e.expr)
        if isinstance(e, Selector) and e.range is None:
            return instant_rows(self._selected(e), self._refs(e), self.ev.lookback)
        if isinstance(e, Unary):
            v = self.eval(e.expr)
            if isinstance(v, np.ndarray):
                return -v
            assert isinstance(v, Rows)
            return Rows([drop_name(ls) for ls in v.labels], -v.vals, v.mask, v.ordered)
        if isinstance(e, Binary):
            return self._binary(e, self.eval(e.lhs), self.eval(e.rhs))
        if isinstance(e, Aggregate):
            param = None if e.param is None else self.eval(e.param)
            vec = self.eval(e.expr)
            assert isinstance(vec, Rows) and not isinstance(param, Rows)
            return aggregate_rows(e, vec, param, self.poll)
        if isinstance(e, Call):
            return self._call(e)
        raise Fallback(type(e).__name__)  # range selectors outside functions, subqueries

    def _selected(self, sel: Selector) -> Sequence[Loaded]:
        series = self.ev._data.get(sel.matchers, [])
        held = series.bound if isinstance(series, StreamedBatch) and not series.whole else len(series)
        if held * self.n > self.ev.max_samples:
            # (series x steps) values held at once: past the sample limit, step by step holds one step
            raise Fallback("too many points to hold at once")
        return series

    def _refs(self, sel: Selector | Subquery) -> np.ndarray:
        at = resolve_at(sel, self.ev.start, self.ev.end)
        base = self.steps if at is None else np.full(self.n, at, dtype=np.int64)
        return base - round(sel.offset * 1000)

    # -- binary operators ---------------------------------------------------------------------------

    def _binary(self, b: Binary, lhs: RangeValue, rhs: RangeValue) -> RangeValue:
        if isinstance(lhs, np.ndarray) and isinstance(rhs, np.ndarray):
            value, keep = _elem(b.op, lhs, rhs)
            return keep.astype(np.float64) if b.op in COMPARISONS else value
        if isinstance(lhs, Rows) and isinstance(rhs, Rows):
            m = b.matching or Matching()
            if b.op in ("and", "unless"):
                return _and_unless(lhs, rhs, m, keep=b.op == "and")
            if b.op == "or":
                return _or(lhs, rhs, m)
            return _vector_op(b, lhs, rhs, m)
        if isinstance(lhs, Rows) and isinstance(rhs, np.ndarray):
            return _vector_scalar(b, lhs, rhs, swap=False)
        if isinstance(rhs, Rows) and isinstance(lhs, np.ndarray):
            return _vector_scalar(b, rhs, lhs, swap=True)
        raise Fallback(f"operands of {b.op}")

    # -- functions ----------------------------------------------------------------------------------

    def _call(self, c: Call) -> RangeValue:
        name = c.func
        if name == "timestamp":
            arg = _unwrap(c.args[0])
            if isinstance(arg, Selector) and arg.range is None:
                return sample_times(self._selected(arg), self._refs(arg), self.ev.lookback)
            rows = self._rows(arg)
            vals = np.broadcast_to(self.steps / 1000, rows.vals.shape)
            return Rows([drop_name(ls) for ls in rows.labels], vals, rows.mask, rows.ordered)
        if name in ("absent", "absent_over_time"):
            return self._absent(c)
        if name == "histogram_quantile":
            q = self.eval(c.args[0])
            assert isinstance(q, np.ndarray)
            return histogram_quantile_rows(q, self._rows(c.args[1]), self.poll)
        sel = _unwrap(c.args[0]) if c.args else None
        if isinstance(sel, Selector) and sel.range is not None:
            if len(c.args) > 1:
                raise Fallback(name)
            rng = round(sel.range * 1000)
            rows = window_rows(name, self._selected(sel), self._refs(sel), rng, sel.range, self.poll)
            return rows.with_labels(rows.labels)
        if name in _NATIVE_ONLY:
            return Rows.empty(self.n)
        args = [self.eval(a) for a in c.args]
        if name == "time":
            return self.steps / 1000
        if name == "pi":
            return np.full(self.n, math.pi)
        if name == "vector":
            assert isinstance(args[0], np.ndarray)
            return Rows([Labels()], args[0][None, :].copy(), np.ones((1, self.n), dtype=bool))
        vec = args[0] if args else None
        if not isinstance(vec, Rows):
            raise Fallback(name)
        if name == "scalar":
            one = vec.mask.sum(axis=0) == 1
            if not len(vec.labels):
                return np.full(self.n, math.nan)
            picked = vec.vals[np.argmax(vec.mask, axis=0), np.arange(self.n)]
            return np.where(one, picked, math.nan)
        if name in ("sort", "sort_desc"):
            return Rows(vec.labels, vec.vals, vec.mask, ordered=False).with_labels(vec.labels)
        if name in ("label_replace", "label_join"):
            fake = [(ls, 0.0) for ls in vec.labels]
            call: list[Any] = [fake, *args[1:]]
            relabelled = VECTOR_FUNCTIONS[name](call, 0)
            assert isinstance(relabelled, list)
            return vec.with_labels([ls for ls, _ in relabelled])
        labels = [drop_name(ls) for ls in vec.labels]
        with np.errstate(all="ignore"):
            if name in _NP:
                return Rows(labels, _NP[name](vec.vals), vec.mask, vec.ordered).with_labels(labels)
            return self._clamp_round(name, vec, labels, args)

    def _clamp_round(self, name: str, vec: Rows, labels: list[Labels], args: list[RangeValue]) -> Rows:
        x = vec.vals
        mask = vec.mask
        if name == "round":
            to = args[1] if len(args) > 1 else np.ones(self.n)
            assert isinstance(to, np.ndarray)
            inv = np.where(to != 0, 1.0 / to, math.inf)
            scaled = x * inv
            out = np.where(np.isfinite(scaled), np.floor(scaled + 0.5) / inv, scaled / inv)
        elif name in ("clamp", "clamp_max", "clamp_min"):
            lo = args[1] if name != "clamp_max" else None
            hi = args[2] if name == "clamp" else (args[1] if name == "clamp_max" else None)
            out = x
            if hi is not None:
                assert isinstance(hi, np.ndarray)
                out = _go_min(out, hi) if name == "clamp_max" else _go_min(hi, out)
            if lo is not None:
                assert isinstance(lo, np.ndarray)
                out = _go_max(lo, out) if name == "clamp" else _go_max(out, lo)
            if name == "clamp":
                assert isinstance(lo, np.ndarray) and isinstance(hi, np.ndarray)
                mask = mask & ~(hi < lo)
        else:
            raise Fallback(name)
        return Rows(labels, np.broadcast_to(out, x.shape), mask, vec.ordered).with_labels(labels)

    def _rows(self, e: Expr) -> Rows:
        v = self.eval(e)
        if not isinstance(v, Rows):
            raise Fallback("not a vector")
        return v

    def _absent(self, c: Call) -> Rows:
        arg = _unwrap(c.args[0])
        if c.func == "absent":
            present = self._rows(c.args[0]).mask.any(axis=0)
        elif isinstance(arg, Selector) and arg.range is not None:
            present = window_presence(self.ev._data.get(arg.matchers, []), self._refs(arg),
                                      round(arg.range * 1000))
        else:
            raise Fallback("absent_over_time of a subquery")
        return Rows([absent_labels(c.args[0])], np.ones((1, self.n)), ~np.asarray(present)[None, :])


def _go_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a) | np.isnan(b), math.nan, np.where(b < a, b, a))


def _go_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(a) | np.isnan(b), math.nan, np.where(b > a, b, a))


def _elem(op: str, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_binops._elem`` over arrays: ``(value, keep)``."""
    a, b = np.broadcast_arrays(a, b)
    with np.errstate(all="ignore"):
        if op in _CMP:
            keep = {"==": np.equal, "!=": np.not_equal, ">": np.greater, "<": np.less,
                    ">=": np.greater_equal, "<=": np.less_equal}[op](a, b)
            return a, keep
        ones = np.ones(a.shape, dtype=bool)
        if op == "+":
            return a + b, ones
        if op == "-":
            return a - b, ones
        if op == "*":
            return a * b, ones
        if op == "/":
            return a / b, ones
    fn = _ARITH[op]  # %, ^, atan2: Go's semantics through the instant path's own scalar functions
    out = np.array([fn(x, y) for x, y in zip(a.ravel().tolist(), b.ravel().tolist(), strict=True)])
    return out.reshape(a.shape), ones


def _vector_scalar(b: Binary, rows: Rows, scalar: np.ndarray, *, swap: bool) -> Rows:
    lv, rv = (scalar, rows.vals) if swap else (rows.vals, scalar)
    value, keep = _elem(b.op, lv, rv)
    if b.op in COMPARISONS:
        value = np.broadcast_to(rows.vals, keep.shape)
    if b.bool_:
        value, keep = keep.astype(np.float64), np.ones(keep.shape, dtype=bool)
    drop = b.op in _DROPS_NAME or b.bool_
    labels = [drop_name(ls) for ls in rows.labels] if drop else rows.labels
    return Rows(labels, value, rows.mask & keep, rows.ordered)


def _presence(rows: Rows, keys: list[tuple[tuple[str, str], ...]]) -> dict[tuple[tuple[str, str], ...],
                                                                           np.ndarray]:
    out: dict[tuple[tuple[str, str], ...], np.ndarray] = {}
    for k, m in zip(keys, rows.mask, strict=True):
        old = out.get(k)
        out[k] = m if old is None else old | m
    return out


def _present_in(rows: Rows, other: Rows, sig: Callable[[Labels], tuple[tuple[str, str], ...]]) -> np.ndarray:
    """Per series of ``rows`` and step: whether ``other`` has a series of the same signature there."""
    there = _presence(other, [sig(ls) for ls in other.labels])
    out = np.zeros(rows.mask.shape, dtype=bool)
    for i, ls in enumerate(deadline_checked(rows.labels)):
        got = there.get(sig(ls))
        if got is not None:
            out[i] = got
    return out


def _and_unless(lhs: Rows, rhs: Rows, m: Matching, *, keep: bool) -> Rows:
    hit = _present_in(lhs, rhs, _sig_fn(m))
    return Rows(lhs.labels, lhs.vals, lhs.mask & (hit if keep else ~hit), lhs.ordered)


def _or(lhs: Rows, rhs: Rows, m: Matching) -> Rows:
    taken = _present_in(rhs, lhs, _sig_fn(m))
    return Rows(lhs.labels + rhs.labels, np.vstack([lhs.vals, rhs.vals]),
                np.vstack([lhs.mask, rhs.mask & ~taken]), lhs.ordered and rhs.ordered)


def _vector_op(b: Binary, lhs: Rows, rhs: Rows, m: Matching) -> Rows:
    swapped = m.card == "one-to-many"
    if swapped:
        lhs, rhs = rhs, lhs
    sig = _sig_fn(m)
    right: dict[tuple[tuple[str, str], ...], int] = {}
    for j, rs in enumerate(deadline_checked(rhs.labels)):
        if right.setdefault(sig(rs), j) != j:
            raise Fallback("many series on the matched side")  # the instant path names them per step
    li: list[int] = []
    rj: list[int] = []
    seen: set[tuple[tuple[str, str], ...]] = set()
    for i, ls in enumerate(deadline_checked(lhs.labels)):
        key = sig(ls)
        match = right.get(key)
        if match is None:
            continue
        if m.card == "one-to-one":
            if key in seen:
                raise Fallback("many-to-one without group_left")
            seen.add(key)
        li.append(i)
        rj.append(match)
    steps = lhs.mask.shape[1]
    if not li:
        return Rows.empty(steps)
    pairs = deadline_checked(zip(li, rj, strict=True))
    metrics = [_result_labels(lhs.labels[i], rhs.labels[j], b, m) for i, j in pairs]
    if len(set(metrics)) != len(metrics):
        raise Fallback("grouping labels do not make matches unique")
    lv, rv = lhs.vals[li], rhs.vals[rj]
    a, c = (rv, lv) if swapped else (lv, rv)
    value, keep = _elem(b.op, a, c)
    if b.bool_:
        value, keep = keep.astype(np.float64), np.ones(keep.shape, dtype=bool)
    return Rows(metrics, value, lhs.mask[li] & rhs.mask[rj] & keep, lhs.ordered)
