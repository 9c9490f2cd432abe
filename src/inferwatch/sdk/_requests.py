"""Request aggregates: counts by (route, code) and a latency histogram per route.

Runs on the background thread only. A batch's types are checked in C
(``map(type, ...)``); small batches (the steady state at moderate load) are
counted in plain Python with ``bisect``, large ones with numpy: one
``np.searchsorted`` for the buckets of the whole batch and ``np.bincount`` per
route. Both paths give the same aggregates (a test checks it).
"""

from __future__ import annotations

import math
import numbers
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from inferwatch.model import metrics as catalog

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = ["OTHER_ROUTE", "RequestAggregates", "RouteHistogram"]

MAX_ROUTES = 1000
"""Distinct routes kept; later ones are folded into ``OTHER_ROUTE`` (bounded cardinality)."""

OTHER_ROUTE = "<other>"
"""The route label value that collects routes beyond ``MAX_ROUTES``."""


def _plain_types(routes: Sequence[Any], statuses: Sequence[Any], durations: Sequence[Any]) -> bool:
    """Whether every route is a str, status an int and duration a float or int (the usual case).

    ``map(type, ...)`` runs in C, so checking a whole batch costs little; ranges
    are checked afterwards, and any other type sends the batch through ``_valid``.
    """
    return (
        set(map(type, routes)) <= {str}
        and set(map(type, statuses)) <= {int}
        and set(map(type, durations)) <= {float, int}
    )


def _valid(route: Any, status: Any, duration: Any) -> bool:
    """A request observation is usable: str route, HTTP status 100-599, finite duration >= 0."""
    return bool(
        isinstance(route, str)
        and isinstance(status, numbers.Integral)  # numpy's integers too, without importing numpy
        and not isinstance(status, bool)
        and 100 <= int(status) <= 599
        and isinstance(duration, numbers.Real)
        and not isinstance(duration, bool)
        and 0.0 <= float(duration) < math.inf
    )


def _normalise(route: str, status: Any, duration: Any) -> tuple[str, int, float]:
    return route, int(status), float(duration)


@dataclass
class RouteHistogram:
    """Non-cumulative bucket counts (last one is +Inf), sum and count of one route."""

    buckets: list[int]
    sum: float = 0.0
    count: int = 0

    def cumulative(self) -> list[int]:
        """Cumulative counts per upper bound, as exposition wants them."""
        return list(accumulate(self.buckets))


SMALL_BATCH = 128
"""Below this many requests a batch is aggregated in plain Python (numpy's per-call cost dominates)."""


@dataclass
class RequestAggregates:
    """Everything the SDK knows about requests since start (monotonic counters)."""

    bounds: tuple[float, ...]
    codes: dict[tuple[str, int], int] = field(default_factory=dict)
    histograms: dict[str, RouteHistogram] = field(default_factory=dict)
    invalid: int = 0
    exemplars: dict[str, dict[int, tuple[str, float, float]]] = field(default_factory=dict)
    """Per route, the latest traced observation per bucket index: ``(trace_id, seconds, time)``."""
    counted: set[str] = field(default_factory=set)
    """Routes counted without a latency (generations: their latency is the generation histograms')."""

    def add_counts(self, items: Sequence[tuple[Any, ...]]) -> None:
        """Count ``(tag, route, status)`` items by code only: no duration goes into the histogram.

        A streamed generation's duration is the whole stream (seconds, by design), so
        it would page the request-latency rules on healthy traffic; its latency is
        judged by time to first token and per output token instead.
        """
        for _, route, status in items:
            if not (isinstance(route, str) and isinstance(status, int) and not isinstance(status, bool)
                    and 100 <= status <= 599):
                self.invalid += 1
                continue
            if route not in self.counted:
                known = len(self.counted | self.histograms.keys())
                if route not in self.histograms and known >= MAX_ROUTES - 1:
                    route = OTHER_ROUTE
                self.counted.add(route)
            key = (route, status)
            self.codes[key] = self.codes.get(key, 0) + 1

    def add_exemplars(self, items: Sequence[tuple[str, float, str]], now: float) -> None:
        """Keep ``(route, duration_s, trace_id)`` as its bucket's exemplar (routes already counted)."""
        for route, duration, trace_id in items:
            if route in self.histograms and isinstance(duration, float) and 0.0 <= duration < math.inf:
                bucket = bisect_left(self.bounds, duration)
                self.exemplars.setdefault(route, {})[bucket] = (trace_id, duration, now)

    def add_batch(self, items: Sequence[tuple[Any, ...]]) -> None:
        """Aggregate ``(tag, route, status, duration_s)`` items; count and skip invalid ones."""
        if not items:
            return
        _, routes, statuses, durations = zip(*items, strict=True)
        if not _plain_types(routes, statuses, durations):
            valid = [_normalise(r, s, d) for r, s, d in zip(routes, statuses, durations, strict=True)
                     if _valid(r, s, d)]
            self.invalid += len(items) - len(valid)
            if not valid:
                return
            routes, statuses, durations = (tuple(c) for c in zip(*valid, strict=True))
        if len(self.histograms) + len(set(routes)) > MAX_ROUTES:
            routes = tuple(map(self._route, routes))
        if len(routes) < SMALL_BATCH:
            self._add_small(routes, statuses, durations)
        else:
            self._add_large(routes, statuses, durations)

    def _route(self, route: str) -> str:
        """``route`` while fewer than MAX_ROUTES are known (or it is known), else OTHER_ROUTE."""
        if route in self.histograms or len(self.histograms) < MAX_ROUTES - 1:
            self._hist(route)
            return route
        return OTHER_ROUTE

    def _hist(self, route: str) -> RouteHistogram:
        hist = self.histograms.get(route)
        if hist is None:
            hist = self.histograms[route] = RouteHistogram([0] * (len(self.bounds) + 1))
        return hist

    def _add_small(self, routes: Sequence[str], statuses: Sequence[int], durations: Sequence[float]) -> None:
        bounds, codes, bad = self.bounds, self.codes, 0
        for r, s, d in zip(routes, statuses, durations, strict=True):
            if not (100 <= s <= 599 and 0.0 <= d < math.inf):
                bad += 1
                continue
            key = (r, int(s))
            codes[key] = codes.get(key, 0) + 1
            hist = self._hist(r)
            hist.buckets[bisect_left(bounds, d)] += 1  # bisect_left: d == bound falls in that bucket (le)
            hist.sum += d
            hist.count += 1
        self.invalid += bad

    def _add_large(self, routes: Sequence[str], statuses: Sequence[int], durations: Sequence[float]) -> None:
        import numpy as np  # loaded by the first large batch, not by ``import inferwatch.sdk``

        status = np.fromiter(statuses, np.int64, len(statuses))
        dur = np.fromiter(durations, np.float64, len(durations))
        ok = (status >= 100) & (status <= 599) & (dur >= 0.0) & (dur < math.inf)  # NaN fails both
        index = {r: i for i, r in enumerate(dict.fromkeys(routes))}
        rows = np.fromiter(map(index.__getitem__, routes), np.int64, len(routes))
        if not ok.all():
            self.invalid += int((~ok).sum())
            status, dur, rows = status[ok], dur[ok], rows[ok]
        names = list(index)
        keys, counts = np.unique(rows * 1000 + status, return_counts=True)
        for key, n in zip(keys.tolist(), counts.tolist(), strict=True):
            code_key = (names[key // 1000], key % 1000)
            self.codes[code_key] = self.codes.get(code_key, 0) + n
        width = len(self.bounds) + 1
        bucket = np.searchsorted(np.asarray(self.bounds), dur, side="left")  # left: d == bound -> that bucket
        per = np.bincount(rows * width + bucket, minlength=len(names) * width).reshape(len(names), width)
        sums = np.bincount(rows, weights=dur, minlength=len(names))
        for i, route in enumerate(names):
            n = int(per[i].sum())
            if n:
                hist = self._hist(route)
                hist.buckets = [a + b for a, b in zip(hist.buckets, per[i].tolist(), strict=True)]
                hist.sum += float(sums[i])
                hist.count += n

    def families(self, service: tuple[str, str, str]) -> Iterator[Metric]:
        """The requests counter and the duration histogram, labels in alphabetical order."""
        # prometheus-client is imported where families are built, not by ``import inferwatch.sdk``
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.samples import Exemplar

        svc, model, version = service
        total = CounterMetricFamily(
            catalog.REQUESTS_TOTAL.family, catalog.REQUESTS_TOTAL.help,
            labels=("code", "model", "route", "service", "version"),
        )
        for (route, code), n in sorted(self.codes.items()):
            total.add_metric((str(code), model, route, svc, version), n)
        yield total
        hist = HistogramMetricFamily(
            catalog.REQUEST_DURATION.name, catalog.REQUEST_DURATION.help,
            labels=("model", "route", "service", "version"), unit="seconds",
        )
        les = [_le(b) for b in self.bounds] + ["+Inf"]
        for route, h in sorted(self.histograms.items()):
            buckets: list[Any] = list(zip(les, (int(c) for c in h.cumulative()), strict=True))
            for i, (trace_id, value, at) in self.exemplars.get(route, {}).items():
                buckets[i] = (*buckets[i], Exemplar({"trace_id": trace_id}, value, at))  # OpenMetrics only
            hist.add_metric((model, route, svc, version), buckets, h.sum)
        yield hist


def _le(bound: float) -> str:
    """Bucket bound as Prometheus clients print it (``0.001``, ``1.0``)."""
    return repr(float(bound))
