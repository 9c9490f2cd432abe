"""Instant and range queries: parse, load, evaluate (a range over all steps at once), shape the result.

>>> from inferwatch.model import Labels, Sample
>>> from inferwatch.store import MemoryStore
>>> store = MemoryStore()
>>> store.append([Sample(Labels.of("up", job="api"), 100.0, 1.0)])
>>> Engine(store).instant("sum by (job) (up) * 2", 110.0).value
[(Labels({'job': 'api'}), 2.0)]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from inferwatch.model import Labels, Matcher, watching_deadline
from inferwatch.promql._ast import Expr, Selector, ValueType
from inferwatch.promql._engine import DEFAULT_MAX_SAMPLES, Evaluator, LoadCache
from inferwatch.promql._parser import parse_typed
from inferwatch.promql._range_eval import RangeEvaluator
from inferwatch.promql._rows import Fallback
from inferwatch.promql._shared import SharedResults
from inferwatch.promql._values import EvalError, Matrix, Value, check_unique
from inferwatch.store import Store

__all__ = ["Engine", "InstantResult", "QueryTimeout", "RangeResult"]

MAX_RANGE_POINTS = 11_000


class QueryTimeout(EvalError):
    """The query ran past its deadline."""


@dataclass(frozen=True)
class InstantResult:
    """An instant query's value: ``float`` (scalar), ``str``, a vector list, or a :class:`Matrix`."""

    type: ValueType
    value: Value
    time: float


@dataclass(frozen=True)
class RangeResult:
    """A range query's series, sorted by labels: ``(labels, [(t_seconds, value), ...])``."""

    series: list[tuple[Labels, list[tuple[float, float]]]]


@dataclass
class Engine:
    """Runs PromQL queries over a store with Prometheus 2.42's defaults (lookback 5 m, 50 M samples)."""

    store: Store
    lookback: float = 300.0
    max_samples: int = DEFAULT_MAX_SAMPLES
    default_step: float = 60.0
    cache: LoadCache = field(default_factory=dict)
    cancelled: Callable[[], bool] | None = None  # polled every step: True stops with QueryTimeout
    stepwise: bool = False  # range queries one instant query per step (the reference the fast path matches)
    shared: SharedResults | None = None  # a rule round's common subexpressions, kept across its queries

    def _evaluator(self, start: float, end: float) -> Evaluator:
        return Evaluator(self.store, round(start * 1000), round(end * 1000), round(self.lookback * 1000),
                         round(self.default_step * 1000), self.max_samples, self.cache, self.shared)

    def instant(self, query: str | Expr, t: float) -> InstantResult:
        """Evaluate at ``t`` (Unix seconds)."""
        with watching_deadline(self._poll if self.cancelled is not None else None):
            return self._instant(query, t)

    def _instant(self, query: str | Expr, t: float) -> InstantResult:
        expr, typ = parse_typed(query) if isinstance(query, str) else (query, _type_of(query))
        ev = self._evaluator(t, t)
        ev.prepare(expr)
        ts = round(t * 1000)
        value = ev.eval(expr, ts)
        if isinstance(value, list):
            check_unique(value)
        if isinstance(value, Matrix):
            value = Matrix(sorted(value.series, key=lambda s: s[0]), value.lo, value.hi, value.range_s, ts)
        return InstantResult(typ, value, ts / 1000)

    def latest(self, matchers: tuple[Matcher, ...], t: float) -> list[tuple[Labels, float, float]]:
        """The latest sample at ``t`` of each series matching ``matchers``: ``(labels, t_s, value)``."""
        sel = Selector(matchers)
        ev = self._evaluator(t, t)
        ev.prepare(sel)
        return [(ls, ts / 1000, v) for ls, ts, v in ev.latest(sel, round(t * 1000))]

    def range(self, query: str | Expr, start: float, end: float, step: float) -> RangeResult:
        """Evaluate at ``start, start + step, … <= end`` (the deadline checked all along)."""
        with watching_deadline(self._poll if self.cancelled is not None else None):
            return self._range(query, start, end, step)

    def _range(self, query: str | Expr, start: float, end: float, step: float) -> RangeResult:
        expr, typ = parse_typed(query) if isinstance(query, str) else (query, _type_of(query))
        if typ not in (ValueType.SCALAR, ValueType.VECTOR):
            doc = {"matrix": "range vector", "string": "string"}[typ.value]
            raise EvalError(f'invalid expression type "{doc}" for range query, must be Scalar or '
                            "instant Vector")
        ev = self._evaluator(start, end)
        ev.prepare(expr)
        s_ms, e_ms, step_ms = round(start * 1000), round(end * 1000), round(step * 1000)
        if not self.stepwise:
            steps = np.arange(s_ms, e_ms + 1, step_ms, dtype=np.int64)
            try:
                series = RangeEvaluator(ev, steps, self._poll).series(expr)
            except QueryTimeout:
                raise
            except (Fallback, EvalError):
                pass  # evaluated step by step below: the same answer, or the error at the step it arises
            else:
                return RangeResult(sorted(series, key=lambda kv: kv[0]))
        out: dict[Labels, list[tuple[float, float]]] = {}
        for ts in range(s_ms, e_ms + 1, step_ms):
            self._poll()
            value = ev.eval(expr, ts)
            if isinstance(value, float):
                out.setdefault(Labels(), []).append((ts / 1000, value))
                continue
            assert isinstance(value, list)
            check_unique(value)
            for ls, v in value:
                out.setdefault(ls, []).append((ts / 1000, v))
        return RangeResult(sorted(out.items(), key=lambda kv: kv[0]))


    def _poll(self) -> None:
        if self.cancelled is not None and self.cancelled():
            raise QueryTimeout("query timed out in query execution")


def _type_of(e: Expr) -> ValueType:
    from inferwatch.promql._ast import value_type

    return value_type(e)
