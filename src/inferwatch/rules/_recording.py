"""Recording rules: an expression evaluated each round and stored as a new series, as Prometheus does.

Rules run in order, so a rule reads what an earlier one wrote at the same
time (the SLO windows read the 5m ratio just recorded); a series a rule
stops producing gets a staleness marker, so an instant query stops finding
it at once instead of 5 minutes later.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from inferwatch._exceptions import InputError, StoreError
from inferwatch.model import STALE_NAN, Labels, Sample, is_stale_nan
from inferwatch.rules._engine import EvalError, LabelMemo, QueryEngine
from inferwatch.rules._promql import Expr
from inferwatch.store import Store

__all__ = ["Appender", "Recorder", "RecordingRule"]

log = logging.getLogger(__name__)


class Appender(Protocol):
    """Where recorded samples go (a store, or a tee that also ships them)."""

    def append(self, samples: Iterable[Sample]) -> None:
        """Store ``samples``."""
        ...


@dataclass(frozen=True)
class RecordingRule:
    """``record: NAME, expr: EXPR, labels: {...}`` in the rule group ``group``."""

    record: str
    expr: Expr
    labels: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    group: str = "inferwatch-recordings"
    text: str = ""  # the expression as written (exported as is: ``30d`` stays ``30d``, not ``4w2d``)

    @property
    def promql(self) -> str:
        """The expression's PromQL text."""
        return self.text or str(self.expr)

    def output(self, labels: Labels) -> Labels:
        """A result's labels as stored: the rule's labels over the result's, named ``record``."""
        merged = dict(labels.without_name().items_tuple)
        merged.update(self.labels)
        merged["__name__"] = self.record
        return Labels(merged)


class Recorder:
    """Evaluates recording rules at a time and appends their samples to the store."""

    def __init__(self, rules: Sequence[RecordingRule], store: Store, memo: LabelMemo | None = None,
                 appender: Appender | None = None) -> None:
        """Rules read ``store``; their samples go to ``appender`` (default: the store), which must
        store them too (the server's remote-write tee: recorded series reach the remotes)."""
        self.rules = list(rules)
        self.store = store
        self.appender: Appender = appender or store
        self._memo = memo or LabelMemo()
        self._last: list[set[Labels]] = [set() for _ in self.rules]

    def record(self, ts: float) -> int:
        """Evaluate every rule at ``ts`` in order; return the number of samples written."""
        written = 0
        for i, rule in enumerate(self.rules):
            # A fresh engine per rule: its load cache must not hide what an earlier rule wrote.
            engine = QueryEngine(self.store, memo=self._memo)
            try:
                samples = self._samples(rule, engine, ts)
                gone = self._last[i] - {s.labels for s in samples}
                samples += [Sample(lab, ts, STALE_NAN) for lab in gone]
                self.appender.append(samples)
            except (EvalError, StoreError, InputError) as exc:  # InputError: over a server.limits limit
                log.warning("recording rule %s: evaluation at %s failed: %s", rule.record, ts, exc)
                continue
            self._last[i] = {s.labels for s in samples if not is_stale_nan(s.v)}
            written += len(samples)
        return written

    @staticmethod
    def _samples(rule: RecordingRule, engine: QueryEngine, ts: float) -> list[Sample]:
        res = engine.instant(rule.expr, ts)
        if not isinstance(res, list):
            return [Sample(rule.output(Labels({})), ts, res)]
        out = [Sample(rule.output(lab), ts, v) for lab, v in res]
        if len({s.labels for s in out}) != len(out):
            raise EvalError("vector contains metrics with the same labelset after applying rule labels")
        return out
