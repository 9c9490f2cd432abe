"""The PromQL evaluator: one expression at one step, over samples loaded once per query.

Semantics are Prometheus 2.42's (promql/engine.go): lookback (5 m) and
staleness for instant selectors, inclusive ``[t - range, t]`` windows,
``offset`` and ``@`` (with ``start()``/``end()``), subqueries stepping on
multiples of their step, the default subquery step being the evaluation
interval (1 m). Left-nested binary chains are evaluated in a loop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from inferwatch.model import Labels, Matcher, check_deadline, deadline_checked
from inferwatch.promql._aggregate import aggregate
from inferwatch.promql._ast import (
    Aggregate,
    Binary,
    Call,
    Expr,
    Number,
    Paren,
    Selector,
    String,
    Subquery,
    Unary,
)
from inferwatch.promql._batch import LoadedBatch, StreamedBatch, load_batch, stream_batch
from inferwatch.promql._binops import apply_binary
from inferwatch.promql._columns import COLUMN_OPS, LatestBatch, aggregate_columns, load_latest_columns
from inferwatch.promql._data import Loaded, Span, instant_only, load, needed_spans, resolve_at
from inferwatch.promql._functions import VECTOR_FUNCTIONS, absent_labels
from inferwatch.promql._range_functions import RANGE_FUNCTIONS
from inferwatch.promql._range_windows import WINDOW_FUNCTIONS, batch_window, instant_rows, window_rows
from inferwatch.promql._shared import SharedResults
from inferwatch.promql._values import EvalError, Matrix, Value, Vector, check_unique, drop_name
from inferwatch.store import Store

__all__ = ["DEFAULT_LOOKBACK_MS", "DEFAULT_MAX_SAMPLES", "Evaluator", "LoadCache"]

DEFAULT_MAX_SAMPLES = 50_000_000
# (matchers, span, last sample only) -> the series
LoadCache = dict[tuple[tuple[Matcher, ...], Span, bool], list[Loaded] | LatestBatch | LoadedBatch]
_WIDE = 256  # selectors over more series than this pick their samples with numpy
DEFAULT_LOOKBACK_MS = 300_000  # how far back an instant selector looks for a sample (Prometheus: 5 m)


@dataclass
class Evaluator:
    """Evaluates one parsed expression for a query spanning ``start``..``end`` (ms)."""

    store: Store
    start: int
    end: int
    lookback: int = DEFAULT_LOOKBACK_MS
    default_step: int = 60_000
    max_samples: int = DEFAULT_MAX_SAMPLES
    cache: LoadCache = field(default_factory=dict)
    shared: SharedResults | None = None  # a round's common subexpressions (rules), kept by their first use
    _data: dict[tuple[Matcher, ...], list[Loaded] | LatestBatch | LoadedBatch] = field(default_factory=dict)
    _sub: dict[tuple[int, int], Vector] = field(default_factory=dict)

    def prepare(self, expr: Expr) -> None:
        """Load every selector's samples over the span the query needs."""
        total = 0
        # an instant query's instant selectors pick each series' last sample in the lookback: read only that
        single = instant_only(expr) if self.start == self.end else set()
        for matchers, span in needed_spans(expr, self.start, self.end, self.lookback).items():
            latest = matchers in single and span[1] - span[0] == self.lookback  # one step: one window
            if not latest and self.shared is not None and self.start == self.end:
                span = self.shared.plan.span(matchers, span, self.end)  # the round's reads as one
            key = (matchers, span, latest)
            hit = self.cache.get(key)
            if hit is None:
                hit = self._columns(matchers, span, latest)
                if hit is None:
                    hit = load(self.store, matchers, span, latest=latest)
                self.cache[key] = hit
            self._data[matchers] = hit
            if isinstance(hit, StreamedBatch):
                continue  # its samples are counted as they are read (the store's query bounds)
            total += hit.samples if isinstance(hit, LatestBatch | LoadedBatch) else sum(len(s.t) for s in hit)
            if total > self.max_samples:
                raise EvalError("query processing would load too many samples into memory in query execution")

    def _columns(self, matchers: tuple[Matcher, ...], span: Span,
                 latest: bool) -> LatestBatch | LoadedBatch | None:
        """The selector's samples as columns where the store reads them; a range query's a batch of series
        at a time until something needs them whole (:class:`StreamedBatch`)."""
        if latest:
            return load_latest_columns(self.store, matchers, span)
        streamed = stream_batch(self.store, matchers, span) if self.start != self.end else None
        return streamed if streamed is not None else load_batch(self.store, matchers, span)

    def eval(self, e: Expr, ts: int) -> Value:
        """The value of ``e`` at step ``ts`` (ms)."""
        check_deadline()  # every node of every step (the loops inside check on their own)
        if isinstance(e, Number):
            return e.value
        if isinstance(e, String):
            return e.value
        if isinstance(e, Paren):
            return self.eval(e.expr, ts)
        if isinstance(e, Selector):
            return self._selector(e, ts) if e.range is None else self._matrix(e, ts)
        if isinstance(e, Binary | Call | Aggregate):
            return self._computed(e, ts)
        if isinstance(e, Unary):
            v = self.eval(e.expr, ts)
            if isinstance(v, float):
                return -v
            assert isinstance(v, list)
            return [(drop_name(ls), -x) for ls, x in v]
        return self._subquery(e, ts)

    def _computed(self, e: Binary | Call | Aggregate, ts: int) -> Value:
        key = None if self.shared is None else self.shared.key(e, ts, self.start, self.end)
        if key is not None:
            assert self.shared is not None
            hit = self.shared.get(key)
            if hit is not None:
                return hit
        if isinstance(e, Binary):
            value = self._binary(e, ts)
        elif isinstance(e, Call):
            value = self._call(e, ts)
        else:
            value = self._aggregate(e, ts)
        if key is not None:
            assert self.shared is not None
            self.shared.put(key, value)
        return value

    def _ref(self, sel: Selector | Subquery, ts: int) -> int:
        at = resolve_at(sel, self.start, self.end)
        return (ts if at is None else at) - round(sel.offset * 1000)

    def _selector(self, sel: Selector, ts: int) -> Vector:
        ref = self._ref(sel, ts)
        series = self._data.get(sel.matchers, [])
        if isinstance(series, LatestBatch):  # the store's columns: no object per series
            return series.vector(ref, self.lookback)
        if len(series) > _WIDE:  # one searchsorted for all the series (a rule over 50,000 of them)
            rows = instant_rows(series, np.array([ref], dtype=np.int64), self.lookback)
            return list(zip(rows.labels, rows.vals[:, 0].tolist(), strict=True))
        out: Vector = []
        for s in deadline_checked(series):
            hit = s.at(ref, self.lookback)
            if hit is not None:
                out.append((s.labels, hit[1]))
        return out

    def latest(self, sel: Selector, ts: int) -> list[tuple[Labels, int, float]]:
        """Each selected series' latest live sample at ``ts``: ``(labels, t_ms, value)``."""
        ref = self._ref(sel, ts)
        out: list[tuple[Labels, int, float]] = []
        for s in deadline_checked(self._data.get(sel.matchers, [])):
            hit = s.at(ref, self.lookback)
            if hit is not None:
                out.append((s.labels, hit[0], hit[1]))
        return out

    def _sample_times(self, sel: Selector, ts: int) -> Vector:
        return [(drop_name(ls), t / 1000) for ls, t, _ in self.latest(sel, ts)]

    def _matrix(self, sel: Selector, ts: int) -> Matrix:
        assert sel.range is not None
        ref = self._ref(sel, ts)
        lo = ref - round(sel.range * 1000)
        series = []
        for s in self._data.get(sel.matchers, []):
            t, v = s.window(lo, ref)
            if len(t):
                series.append((s.labels, t, v))
        return Matrix(series, lo, ref, sel.range, ts)

    def _subquery(self, sq: Subquery, ts: int) -> Matrix:
        ref = self._ref(sq, ts)
        step = round(sq.step * 1000) or self.default_step
        lo = ref - round(sq.range * 1000)
        first = -((-lo) // step) * step
        points: dict[Labels, tuple[list[int], list[float]]] = {}
        for t in range(first, ref + 1, step):
            key = (id(sq), t)
            vec = self._sub.get(key)
            if vec is None:
                inner = self.eval(sq.expr, t)
                assert isinstance(inner, list)
                vec = self._sub[key] = inner
            for ls, v in vec:
                ts_list, vs = points.setdefault(ls, ([], []))
                ts_list.append(t)
                vs.append(v)
        series = [(ls, np.array(tt, dtype=np.int64), np.array(vv)) for ls, (tt, vv) in points.items()]
        return Matrix(series, lo, ref, sq.range, ts)

    def _binary(self, e: Binary, ts: int) -> Value:
        # A left-nested chain in a loop, bottom up. ``x and y`` is empty when either side is, and
        # ``x unless y`` when x is: an empty left side skips the right one, and an ``and`` whose
        # right side is the cheaper one (a guard such as ``… and on (service) rate(…) == 0``) has it
        # evaluated first, skipping everything below it in the chain when it is empty. Every result
        # is what evaluating both sides gives; only errors of a skipped side are not raised.
        spine: list[Binary] = []
        node: Expr = e
        while isinstance(node, Binary):
            spine.append(node)
            node = node.lhs
        first: dict[int, Value] = {}  # right sides evaluated ahead, by position in the spine
        cut = len(spine)
        for i, b in enumerate(spine):  # top down: the highest empty guard cuts the most
            if b.op == "and" and cost(b.rhs) < cost(b.lhs):
                first[i] = rhs = self.eval(b.rhs, ts)
                if isinstance(rhs, list) and not rhs:
                    cut = i
                    break
        acc: Value = [] if cut < len(spine) else self.eval(node, ts)
        for i in range(min(cut, len(spine)) - 1, -1, -1):
            b = spine[i]
            if b.op in ("and", "unless") and isinstance(acc, list) and not acc:
                continue  # nothing to keep: the right side is not needed
            acc = apply_binary(b, acc, first[i] if i in first else self.eval(b.rhs, ts))
        return acc

    def _aggregate(self, e: Aggregate, ts: int) -> Value:
        param = None if e.param is None else self.eval(e.param, ts)
        inner = e.expr
        while isinstance(inner, Paren):
            inner = inner.expr
        if e.op in COLUMN_OPS and isinstance(inner, Selector) and inner.range is None:
            batch = self._data.get(inner.matchers)
            if isinstance(batch, LatestBatch) and batch.samples > _WIDE:  # folded as columns
                return aggregate_columns(e, batch, self._ref(inner, ts), self.lookback)
        vec = self.eval(e.expr, ts)
        assert isinstance(vec, list) and not isinstance(param, list | Matrix)
        return aggregate(e, vec, param)

    def _call(self, c: Call, ts: int) -> Value:
        name = c.func
        if name == "timestamp":
            arg = c.args[0]
            while isinstance(arg, Paren):
                arg = arg.expr
            if isinstance(arg, Selector):
                return self._sample_times(arg, ts)
            vec = self.eval(arg, ts)
            assert isinstance(vec, list)
            return [(drop_name(ls), ts / 1000) for ls, _ in vec]
        if name in ("absent", "absent_over_time"):
            return self._absent(c, ts)
        if len(c.args) == 1 and isinstance(c.args[0], Selector) and c.args[0].range is not None:
            wide = self._wide_window(name, c.args[0], ts)
            if wide is not None:
                return check_unique(wide)
        args = [self.eval(a, ts) for a in c.args]
        rf = RANGE_FUNCTIONS.get(name)
        if rf is not None:
            mat = next(a for a in args if isinstance(a, Matrix))
            scalars = [a for a in args if isinstance(a, float)]
            return check_unique(rf(mat, scalars))
        out = VECTOR_FUNCTIONS[name](args, ts)
        return check_unique(out) if isinstance(out, list) else out

    def _wide_window(self, func: str, sel: Selector, ts: int) -> Vector | None:
        # `rate(x[5m])` over a wide selection: every series' window at once (``None``: series by series)
        series = self._data.get(sel.matchers)
        if series is None or isinstance(series, LatestBatch) or len(series) <= _WIDE:
            return None
        assert sel.range is not None
        check_deadline()
        ref, range_ms = self._ref(sel, ts), round(sel.range * 1000)
        if isinstance(series, LoadedBatch):
            return batch_window(func, series, ref, range_ms, sel.range)
        if func not in WINDOW_FUNCTIONS:
            return None
        rows = window_rows(func, series, np.array([ref], dtype=np.int64), range_ms, sel.range, check_deadline)
        return list(zip(rows.labels, rows.vals[:, 0].tolist(), strict=True))

    def _absent(self, c: Call, ts: int) -> Vector:
        v = self.eval(c.args[0], ts)
        present = bool(v.series) if isinstance(v, Matrix) else bool(v)
        if present:
            return []
        return [(absent_labels(c.args[0]), 1.0)]


def cost(e: Expr) -> float:
    """A rough relative cost of evaluating ``e`` once: selectors weighted by their range, subqueries by
    their steps (only compared, to pick which side of an ``and`` to evaluate first)."""
    total, stack = 0.0, [e]
    while stack:
        node = stack.pop()
        total += 1.0
        if isinstance(node, Selector):
            total += (node.range or 0.0) / 60.0
        elif isinstance(node, Subquery):
            steps = node.range / (node.step or 60.0)
            total += steps * cost(node.expr)
        elif isinstance(node, Binary):
            stack += (node.lhs, node.rhs)
        elif isinstance(node, Call):
            stack.extend(node.args)
        elif isinstance(node, Aggregate | Paren | Unary):
            stack.append(node.expr)
    return total
