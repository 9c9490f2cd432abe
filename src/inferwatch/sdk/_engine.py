"""Inference-engine state: ``Monitor.record_engine(running=..., waiting=..., kv_cache_usage=...)``.

For an application that drives its engine in-process (vLLM's ``LLMEngine``,
a TensorRT-LLM executor...) and reads its scheduler's state: requests running
and waiting, KV-cache usage (gauges: the last value per model), and what
happened since the last call (preemptions, prefix-cache queries and hits:
added to counters). The names follow vLLM's own (``num_requests_running``,
``kv_cache_usage_perc``, ``num_preemptions``, ``prefix_cache_hits``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch.model import metrics as catalog
from inferwatch.sdk._generation import ENGINE

__all__ = ["EngineAggregates"]

MAX_MODELS = 100
"""Distinct models kept (bounded cardinality); more are counted as invalid."""

_GAUGES = (catalog.ENGINE_REQUESTS_RUNNING, catalog.ENGINE_REQUESTS_WAITING, catalog.ENGINE_KV_CACHE_USAGE)
_COUNTERS = (catalog.ENGINE_PREEMPTIONS_TOTAL, catalog.ENGINE_PREFIX_CACHE_QUERIES_TOTAL,
             catalog.ENGINE_PREFIX_CACHE_HITS_TOTAL)


def _gauge_ok(v: Any, high: float) -> bool:
    return v is None or (type(v) in (int, float) and 0.0 <= v <= high)


def _count_ok(v: Any) -> bool:
    return type(v) is int and 0 <= v < 1 << 62


def valid(item: Any) -> bool:
    """``(model, running, waiting, kv_cache_usage, preemptions, queries, hits)`` with sane values."""
    if not (isinstance(item, tuple) and len(item) == 7 and isinstance(item[0], str)):
        return False
    _, running, waiting, usage, *counts = item
    return (_gauge_ok(running, math.inf) and _gauge_ok(waiting, math.inf) and _gauge_ok(usage, 1.0)
            and all(map(_count_ok, counts)))


@dataclass
class EngineAggregates:
    """The engine metrics of one monitor, per model; ``reject(kind)`` counts an invalid observation."""

    service: str
    version: str
    reject: Callable[[str], None]
    kinds: tuple[str, ...] = (ENGINE,)
    gauges: dict[str, list[float | None]] = field(default_factory=dict)
    counts: dict[str, list[int]] = field(default_factory=dict)

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Keep the latest gauges and add the counts (checked here, on the background thread)."""
        for item in payloads:
            if not valid(item) or (item[0] not in self.gauges and len(self.gauges) >= MAX_MODELS):
                self.reject(ENGINE)
                continue
            model, *gauges = item[:4]
            last = self.gauges.setdefault(model, [None, None, None])
            for i, v in enumerate(gauges):
                if v is not None:
                    last[i] = float(v)
            counts = self.counts.setdefault(model, [0, 0, 0])
            for i, n in enumerate(item[4:]):
                counts[i] += n

    def collect(self, now: float) -> Iterable[Metric]:
        """Gauges reported at least once, and the three counters, per model."""
        out: list[Metric] = []
        for i, spec in enumerate(_GAUGES):
            g = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
            for model, values in sorted(self.gauges.items()):
                value = values[i]
                if value is not None:
                    g.add_metric([self.service, model, self.version], value)
            out.append(g)
        for i, spec in enumerate(_COUNTERS):
            c = CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
            for model, n in sorted(self.counts.items()):
                c.add_metric([self.service, model, self.version], n[i])
            out.append(c)
        return [f for f in out if f.samples]
