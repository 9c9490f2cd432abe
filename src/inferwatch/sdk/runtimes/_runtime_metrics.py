"""The runtime aggregates: run durations, phases, batch sizes and errors per (runtime, model, version),
and what each wrapped session or engine says about itself at scrape time.

The wrappers (``_onnx``, ``_tensorrt``) enqueue ``(key, duration_s, batch, failed, phase)`` on the
hot path; this aggregator (kind ``runtime``) builds the histograms on the SDK's background thread.
Sessions register a ``Describe`` callback at instrument time: it is called at every scrape, so a
session that falls back while it serves shows in the next scrape.
"""

from __future__ import annotations

import logging
import math
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from inferwatch.model import metrics as catalog

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = ["MAX_RUNTIME_KEYS", "RUNTIME", "Described", "RuntimeAggregates", "RuntimeKey"]

log = logging.getLogger("inferwatch.sdk")

RUNTIME = "runtime"
"""The observation kind: ``(key, duration_s, batch or 0, failed, phase or "")``."""
MAX_RUNTIME_KEYS = 100
"""Distinct (runtime, model, version) kept per monitor; more are counted as invalid."""

RuntimeKey = tuple[str, str, str]
"""``(runtime, model, version)``."""


@dataclass(frozen=True)
class Described:
    """What a wrapped session or engine says about itself: families (spec, labels after the service
    labels, value) to expose at this scrape."""

    gauges: tuple[tuple[catalog.MetricSpec, tuple[str, ...], float], ...] = ()


Describe = Callable[[], Described]


@dataclass
class _Histogram:
    buckets: list[int]
    sum: float = 0.0
    count: int = 0

    def add(self, bounds: Sequence[float], value: float) -> None:
        self.buckets[bisect_left(bounds, value)] += 1
        self.sum += value
        self.count += 1


@dataclass
class RuntimeAggregates:
    """An ``Aggregator`` of kind ``runtime`` for one monitor's service label."""

    service: str
    kinds: tuple[str, ...] = (RUNTIME,)
    runs: dict[RuntimeKey, _Histogram] = field(default_factory=dict)
    phases: dict[tuple[RuntimeKey, str], _Histogram] = field(default_factory=dict)
    batches: dict[RuntimeKey, _Histogram] = field(default_factory=dict)
    errors: dict[RuntimeKey, int] = field(default_factory=dict)
    invalid: int = 0
    _described: dict[RuntimeKey, Describe] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def describe(self, key: RuntimeKey, describe: Describe) -> None:
        """Expose what ``describe()`` returns at every scrape (replaces an earlier one for ``key``)."""
        with self._lock:
            self._described[key] = describe

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add observations; an invalid one (or a key past the bound) is counted and skipped."""
        for key, duration, batch, failed, phase in payloads:
            if not (0.0 <= duration < math.inf) or not self._known(key):
                self.invalid += 1
            elif failed:
                self.errors[key] = self.errors.get(key, 0) + 1
            elif phase:
                h = self.phases.get((key, phase)) or self.phases.setdefault(
                    (key, phase), _Histogram([0] * (len(catalog.RUNTIME_BUCKETS) + 1)))
                h.add(catalog.RUNTIME_BUCKETS, duration)
            else:
                self.runs[key].add(catalog.RUNTIME_BUCKETS, duration)
                if batch > 0:
                    self.batches[key].add(catalog.BATCH_BUCKETS, batch)

    def _known(self, key: RuntimeKey) -> bool:
        if key in self.runs:
            return True
        if len(self.runs) >= MAX_RUNTIME_KEYS:
            return False
        self.runs[key] = _Histogram([0] * (len(catalog.RUNTIME_BUCKETS) + 1))
        self.batches[key] = _Histogram([0] * (len(catalog.BATCH_BUCKETS) + 1))
        return True

    def collect(self, now: float) -> Iterable[Metric]:
        """The run, phase and batch histograms, the error counter, and every session's description."""
        from prometheus_client.core import CounterMetricFamily

        out = [
            _histogram(catalog.RUNTIME_RUN_DURATION, self.service, self.runs.items(),
                       catalog.RUNTIME_BUCKETS),
            _histogram(catalog.RUNTIME_PHASE_DURATION, self.service,
                       (((*k, phase), h) for (k, phase), h in self.phases.items()), catalog.RUNTIME_BUCKETS),
            _histogram(catalog.RUNTIME_BATCH_SIZE, self.service, self.batches.items(), catalog.BATCH_BUCKETS),
        ]
        spec = catalog.RUNTIME_RUN_ERRORS_TOTAL
        errors = CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
        for key in sorted(self.runs):
            runtime, model, version = key
            errors.add_metric([self.service, model, version, runtime], self.errors.get(key, 0))
        out.append(errors)
        return [f for f in (*out, *self._descriptions()) if f.samples]

    def _descriptions(self) -> list[Metric]:
        from prometheus_client.core import GaugeMetricFamily

        with self._lock:
            described = sorted(self._described.items())
        families: dict[str, Any] = {}
        for key, describe in described:
            try:
                gauges = describe().gauges
            except Exception:  # a session that broke costs its own description, never the scrape
                log.exception("inferwatch sdk: describing the %s session of model %r failed", key[0], key[1])
                continue
            for spec, labels, value in gauges:
                family = families.get(spec.name)
                if family is None:
                    family = families[spec.name] = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
                family.add_metric([self.service, key[1], key[2], *labels], value)
        return list(families.values())


def _histogram(spec: catalog.MetricSpec, service: str, items: Iterable[tuple[tuple[str, ...], _Histogram]],
               bounds: Sequence[float]) -> Metric:
    from prometheus_client.core import HistogramMetricFamily

    family = HistogramMetricFamily(spec.name, spec.help, labels=spec.labels, unit=spec.unit)
    uppers = [*(repr(float(b)) for b in bounds), "+Inf"]
    for (runtime, model, version, *rest), h in sorted(items):
        if not h.count:
            continue
        cumulative, total = [], 0
        for upper, n in zip(uppers, h.buckets, strict=True):
            total += n
            cumulative.append((upper, total))
        family.add_metric([service, model, version, runtime, *rest], cumulative, h.sum)
    return family
