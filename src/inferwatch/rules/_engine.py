"""Instant evaluation for rules: :class:`inferwatch.promql.Engine` with one load cache per round.

One engine serves one evaluation round, so the selector shared by several
rules (e.g. ``inferwatch_requests_total[1m]``) is read from the store once, and
given the round's :class:`~inferwatch.promql.SharedResults`, a subexpression
several rules compute (``rate(inferwatch_requests_total[5m])``) is computed once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from inferwatch.model import Labels
from inferwatch.promql import Engine, EvalError, Expr, LoadCache, Matrix, SharedResults
from inferwatch.store import Store

__all__ = ["LOOKBACK_S", "RULE_TIMEOUT_S", "EvalError", "LabelMemo", "QueryEngine", "Vector"]

LOOKBACK_S = 300.0
RULE_TIMEOUT_S = 10.0  # as a Prometheus rule group's context, bounded (its interval would be 15 s)
Vector = list[tuple[Labels, float]]


class LabelMemo:
    """Memoised label-set transforms kept across rounds (bounded: cleared past ``limit`` entries)."""

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
    """Evaluates expressions at one instant: a vector or a scalar (strings and ranges are refused)."""

    store: Store
    lookback: float = LOOKBACK_S
    memo: LabelMemo = field(default_factory=LabelMemo)
    timeout: float = RULE_TIMEOUT_S
    """Real seconds one rule may take: a runaway rule is cut (``QueryTimeout``, an ``EvalError``), the
    round goes on. ``max_samples`` is the engine's (50,000,000, as Prometheus's)."""
    monotonic: Callable[[], float] = time.monotonic
    shared: SharedResults | None = None
    """The round's common subexpressions (:func:`inferwatch.promql.plan_shared`): one evaluation each."""
    _cache: LoadCache = field(default_factory=dict)

    def instant(self, expr: Expr, t: float) -> Vector | float:
        """The value of ``expr`` at time ``t`` (Unix seconds): a vector or a scalar."""
        deadline, now = self.monotonic() + self.timeout, self.monotonic
        res = Engine(self.store, lookback=self.lookback, cache=self._cache, shared=self.shared,
                     cancelled=lambda: now() > deadline).instant(expr, t)
        if isinstance(res.value, Matrix | str):
            raise EvalError(f"expression gives a {res.type.value}, not a vector or scalar")
        return res.value
