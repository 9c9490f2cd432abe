"""Request aggregates: counts by (route, code) and a latency histogram per route.

Runs on the background thread only. A batch is validated in one pass, then the
histogram buckets of the whole batch are found with one ``np.searchsorted``
and summed per route with one ``np.bincount``.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch.model import metrics as catalog

__all__ = ["OTHER_ROUTE", "RequestAggregates", "RouteHistogram"]

MAX_ROUTES = 1000
"""Distinct routes kept; later ones are folded into ``OTHER_ROUTE`` (bounded cardinality)."""

OTHER_ROUTE = "<other>"
"""The route label value that collects routes beyond ``MAX_ROUTES``."""

_NUMBER = (int, float, np.integer, np.floating)


def _valid(route: Any, status: Any, duration: Any) -> bool:
    """A request observation is usable: str route, HTTP status 100-599, finite duration >= 0."""
    return bool(
        isinstance(route, str)
        and isinstance(status, int | np.integer)
        and not isinstance(status, bool)
        and 100 <= status <= 599
        and isinstance(duration, _NUMBER)
        and not isinstance(duration, bool)
        and 0.0 <= duration < math.inf
    )


@dataclass
class RouteHistogram:
    """Non-cumulative bucket counts (last one is +Inf), sum and count of one route."""

    buckets: NDArray[np.int64]
    sum: float = 0.0
    count: int = 0

    def cumulative(self) -> NDArray[np.int64]:
        """Cumulative counts per upper bound, as exposition wants them."""
        return np.cumsum(self.buckets)


@dataclass
class RequestAggregates:
    """Everything the SDK knows about requests since start (monotonic counters)."""

    bounds: tuple[float, ...]
    codes: dict[tuple[str, int], int] = field(default_factory=dict)
    histograms: dict[str, RouteHistogram] = field(default_factory=dict)
    invalid: int = 0

    def add_batch(self, items: Sequence[tuple[Any, Any, Any, Any]]) -> None:
        """Aggregate ``(tag, route, status, duration_s)`` items; count and skip invalid ones."""
        valid = [(self._route(r), int(s), float(d)) for _, r, s, d in items if _valid(r, s, d)]
        self.invalid += len(items) - len(valid)
        if not valid:
            return
        for key, n in Counter((r, s) for r, s, _ in valid).items():
            self.codes[key] = self.codes.get(key, 0) + n
        self._add_durations(valid)

    def _route(self, route: str) -> str:
        if route in self.histograms or len(self.histograms) < MAX_ROUTES:
            return route
        return OTHER_ROUTE

    def _add_durations(self, valid: list[tuple[str, int, float]]) -> None:
        width = len(self.bounds) + 1
        row: dict[str, int] = {}
        rows = np.fromiter((row.setdefault(r, len(row)) for r, _, _ in valid), np.int64, len(valid))
        durations = np.fromiter((d for _, _, d in valid), np.float64, len(valid))
        # side="left": a duration equal to a bound belongs to that bound's bucket (le).
        bucket = np.searchsorted(np.asarray(self.bounds), durations, side="left")
        counts = np.bincount(rows * width + bucket, minlength=len(row) * width).reshape(len(row), width)
        sums = np.bincount(rows, weights=durations, minlength=len(row))
        for route, i in row.items():
            hist = self.histograms.get(route)
            if hist is None:
                hist = self.histograms[route] = RouteHistogram(np.zeros(width, np.int64))
            hist.buckets += counts[i]
            hist.sum += float(sums[i])
            hist.count += int(counts[i].sum())

    def families(self, service: tuple[str, str, str]) -> Iterator[Metric]:
        """The requests counter and the duration histogram, labels in alphabetical order."""
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
            cum = h.cumulative()
            hist.add_metric(
                (model, route, svc, version), list(zip(les, (int(c) for c in cum), strict=True)), h.sum,
            )
        yield hist


def _le(bound: float) -> str:
    """Bucket bound as Prometheus clients print it (``0.001``, ``1.0``)."""
    return repr(float(bound))
