"""Exemplars: a few (labels, value, time) points per series, each pointing to a trace.

Prometheus keeps exemplars apart from samples, in one circular buffer in
memory; ``ExemplarStore`` keeps a ring per series instead (so a series with
many buckets cannot push out another's) and a bounded number of series (the
one appended to least recently goes first). Appends follow Prometheus's
rules: an exemplar equal to its series' newest one is a duplicate and is
skipped, one not newer than it is out of order and is skipped; a label set
over 128 UTF-8 characters (names and values) is refused. Nothing persists:
exemplars are a pointer into recent traces, and traces are recent too.

>>> from inferwatch.model import Labels, parse_matchers
>>> store = ExemplarStore()
>>> series = Labels.of("latency_seconds_bucket", le="0.5", job="api")
>>> store.add(series, {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}, 0.42, 100.0)
True
>>> store.add(series, {"trace_id": "4bf92f3577b34da6a3ce929d0e0e4736"}, 0.42, 100.0)  # duplicate
False
>>> [(str(r.series), [e.value for e in r.exemplars])
...  for r in store.select([parse_matchers('{job="api"}')], 0.0, 200.0)]
[('latency_seconds_bucket{job="api",le="0.5"}', [0.42])]
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from inferwatch.model import Labels, Matcher, matches_all

__all__ = ["MAX_EXEMPLAR_LABEL_CHARS", "Exemplar", "ExemplarSeries", "ExemplarStore"]

MAX_EXEMPLAR_LABEL_CHARS = 128
"""OpenMetrics' (and Prometheus's) limit on an exemplar's label names and values together."""


@dataclass(frozen=True, slots=True)
class Exemplar:
    """One exemplar: its own labels (``trace_id``), the observed value, a Unix time in seconds."""

    labels: Mapping[str, str]
    value: float
    t: float


@dataclass(frozen=True, slots=True)
class ExemplarSeries:
    """The exemplars of one series in a time range, oldest first."""

    series: Labels
    exemplars: tuple[Exemplar, ...] = field(default=())


class ExemplarStore:
    """Exemplars by series: ``per_series`` kept per series, ``max_series`` series (thread-safe)."""

    def __init__(self, per_series: int = 10, max_series: int = 10_000) -> None:
        if per_series < 1 or max_series < 1:
            raise ValueError(f"per_series and max_series must be >= 1, got {per_series}, {max_series}")
        self.per_series, self.max_series = per_series, max_series
        self._rings: OrderedDict[Labels, deque[Exemplar]] = OrderedDict()
        self._lock = threading.Lock()
        self.refused = 0
        """Exemplars refused: duplicates and out-of-order ones are not counted, only bad ones."""

    def add(self, series: Labels, labels: Mapping[str, str], value: float, t: float) -> bool:
        """Keep one exemplar of ``series``; False when it is a duplicate, out of order or invalid."""
        if sum(len(k) + len(v) for k, v in labels.items()) > MAX_EXEMPLAR_LABEL_CHARS or t != t:
            self.refused += 1
            return False
        ex = Exemplar(dict(labels), float(value), float(t))
        with self._lock:
            ring = self._rings.get(series)
            if ring is None:
                if len(self._rings) >= self.max_series:
                    self._rings.popitem(last=False)
                ring = self._rings[series] = deque(maxlen=self.per_series)
            elif ring and (ring[-1] == ex or t <= ring[-1].t):
                return False  # Prometheus: duplicate (a re-scrape) or out of order
            self._rings.move_to_end(series)
            ring.append(ex)
            return True

    def add_many(self, items: Iterable[tuple[Labels, Mapping[str, str], float, float]]) -> int:
        """``add`` each ``(series, labels, value, t)``; how many were kept."""
        return sum(self.add(*item) for item in items)

    def select(self, matcher_sets: Sequence[Sequence[Matcher]], start: float, end: float,
               ) -> list[ExemplarSeries]:
        """Series matching any of the matcher sets, with their exemplars in ``[start, end]``; by labels."""
        with self._lock:
            rings = [(s, tuple(r)) for s, r in self._rings.items()]
        out = []
        for series, ring in rings:
            if not any(matches_all(ms, series) for ms in matcher_sets):
                continue
            hits = tuple(e for e in ring if start <= e.t <= end)
            if hits:
                out.append(ExemplarSeries(series, hits))
        return sorted(out, key=lambda r: r.series)

    def __len__(self) -> int:
        """Exemplars held."""
        with self._lock:
            return sum(len(r) for r in self._rings.values())
