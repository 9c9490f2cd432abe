"""The tracing pipeline's own counters in the monitor's exposition: spans kept, sampled out, dropped."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from prometheus_client.core import CounterMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch.model import metrics as catalog
from inferwatch.sdk._tracing import Tracing

__all__ = ["TracingMetrics"]


@dataclass
class TracingMetrics:
    """An ``Aggregator`` with no observations: it reads the sampler's and exporter's counts at collect."""

    tracing: Tracing
    kinds: tuple[str, ...] = ()

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Nothing is enqueued for tracing: the counts live in the sampler and exporter."""

    def collect(self, now: float) -> Iterable[Metric]:
        """``inferwatch_trace_spans_total{service,outcome}``."""
        spec, tr = catalog.TRACE_SPANS_TOTAL, self.tracing
        family = CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
        if tr.sampler is None and tr.exporter is None:
            return [family]  # the application's provider: its pipeline, its counts
        counts = tr.sampler.counts if tr.sampler is not None else None
        outcomes = {
            "kept": counts.spans_exported if counts else 0,
            "sampled_out": counts.spans_sampled_out if counts else 0,
            "dropped": counts.spans_dropped if counts else 0,
            "export_failed": tr.spans_failed,
        }
        for outcome, n in outcomes.items():
            family.add_metric([tr.service, outcome], n)
        return [family]
