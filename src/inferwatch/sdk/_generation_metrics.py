"""Generation aggregates: the GenAI histograms and token counters per (route, model).

An ``Aggregator`` of kind ``generation``, fed on the SDK's background thread;
the monitor attaches it on the first generation recorded, so a service that
never streams exposes none of these series (and the generation rules of the
default pack stay inert).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Exemplar

from inferwatch.model import metrics as catalog
from inferwatch.sdk._generation import (
    DURATION_BUCKETS,
    GENERATION,
    GENERATION_EXEMPLAR,
    TOKENS_PER_SECOND_BUCKETS,
    TPOT_BUCKETS,
    TTFT_BUCKETS,
    time_per_output_token,
    valid,
)
from inferwatch.sdk._requests import MAX_ROUTES, OTHER_ROUTE

__all__ = ["GenerationAggregates"]


@dataclass
class _Histogram:
    bounds: tuple[float, ...]
    buckets: list[int] = field(default_factory=list)
    sum: float = 0.0
    count: int = 0
    exemplars: dict[int, Exemplar] = field(default_factory=dict)
    """The latest traced observation per bucket index (served in OpenMetrics only)."""

    def __post_init__(self) -> None:
        self.buckets = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        self.buckets[bisect_left(self.bounds, value)] += 1  # left: a value on a bound is in that bucket (le)
        self.sum += value
        self.count += 1

    def exemplar(self, value: float, trace_id: str, now: float) -> None:
        self.exemplars[bisect_left(self.bounds, value)] = Exemplar({"trace_id": trace_id}, value, now)

    def samples(self) -> list[Any]:
        les = [*(repr(float(b)) for b in self.bounds), "+Inf"]
        out: list[Any] = list(zip(les, accumulate(self.buckets), strict=True))
        for i, ex in self.exemplars.items():
            out[i] = (*out[i], ex)
        return out


@dataclass
class _Series:
    """Everything known about one (route, model)."""

    ttft: _Histogram = field(default_factory=lambda: _Histogram(TTFT_BUCKETS))
    tpot: _Histogram = field(default_factory=lambda: _Histogram(TPOT_BUCKETS))
    duration: _Histogram = field(default_factory=lambda: _Histogram(DURATION_BUCKETS))
    queue: _Histogram = field(default_factory=lambda: _Histogram(TTFT_BUCKETS))
    speed: _Histogram = field(default_factory=lambda: _Histogram(TOKENS_PER_SECOND_BUCKETS))
    codes: dict[int, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, status: int, ttft: float | None, duration: float, tokens_in: int, tokens_out: int,
            queue: float | None) -> None:
        self.codes[status] = self.codes.get(status, 0) + 1
        self.duration.observe(duration)
        self.input_tokens += tokens_in
        self.output_tokens += tokens_out
        if queue is not None:
            self.queue.observe(queue)
        if status >= 400:  # the conventions' TTFT and TPOT are for successful responses
            return
        if ttft is not None:
            self.ttft.observe(ttft)
        tpot = time_per_output_token(ttft, duration, tokens_out)
        if tpot is not None:
            self.tpot.observe(tpot)
        if tokens_out > 0 and duration > 0.0:
            self.speed.observe(tokens_out / duration)

    def exemplar(self, ttft: float | None, duration: float, tokens_out: int, queue: float | None,
                 trace_id: str, now: float) -> None:
        """Point the buckets this generation fell in to its kept trace."""
        self.duration.exemplar(duration, trace_id, now)
        if ttft is not None:
            self.ttft.exemplar(ttft, trace_id, now)
        tpot = time_per_output_token(ttft, duration, tokens_out)
        if tpot is not None:
            self.tpot.exemplar(tpot, trace_id, now)
        if queue is not None:
            self.queue.exemplar(queue, trace_id, now)


@dataclass
class GenerationAggregates:
    """The generation metrics of one monitor; ``reject(kind)`` counts an invalid observation."""

    service: str
    version: str
    reject: Callable[[str], None]
    kinds: tuple[str, ...] = (GENERATION, GENERATION_EXEMPLAR)
    series: dict[tuple[str, str], _Series] = field(default_factory=dict)

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add ``(route, model, status, ttft_s, duration_s, input_tokens, output_tokens, queue_s)`` items.

        Checked here, on the background thread, so the request thread only enqueues.
        """
        if kind == GENERATION_EXEMPLAR:
            self._exemplars(payloads, now)
            return
        for item in payloads:
            if len(item) != 8 or not valid(*item):
                self.reject(GENERATION)
                continue
            route, model, status, ttft, duration, tokens_in, tokens_out, queue = item
            self._series(route, model).add(
                int(status), None if ttft is None else float(ttft), float(duration), int(tokens_in),
                int(tokens_out), None if queue is None else float(queue))

    def _exemplars(self, payloads: Sequence[Any], now: float) -> None:
        for route, model, ttft, duration, tokens_out, queue, trace_id in payloads:
            s = self.series.get((route, model))  # counted first: same queue, earlier item
            if s is not None and valid(route, model, 200, ttft, duration, 0, tokens_out, queue):
                s.exemplar(ttft, duration, tokens_out, queue, trace_id, now)

    def _series(self, route: str, model: str) -> _Series:
        key = (route, model)
        s = self.series.get(key)
        if s is None:
            if len(self.series) >= MAX_ROUTES - 1:  # bounded cardinality: the rest share one series
                key = (OTHER_ROUTE, OTHER_ROUTE)
                s = self.series.get(key)
            if s is None:
                s = self.series[key] = _Series()
        return s

    def collect(self, now: float) -> Iterable[Metric]:
        """Requests by code, the five histograms and the two token counters."""
        c = catalog
        requests = CounterMetricFamily(c.GENERATION_REQUESTS_TOTAL.family, c.GENERATION_REQUESTS_TOTAL.help,
                                       labels=c.GENERATION_REQUESTS_TOTAL.labels)
        hists = {name: _family(spec) for name, spec in (
            ("ttft", c.GENERATION_TTFT), ("tpot", c.GENERATION_TPOT), ("duration", c.GENERATION_DURATION),
            ("queue", c.GENERATION_QUEUE), ("speed", c.GENERATION_TOKENS_PER_SECOND))}
        tokens_in = _counter(c.GENERATION_INPUT_TOKENS_TOTAL)
        tokens_out = _counter(c.GENERATION_OUTPUT_TOKENS_TOTAL)
        for (route, model), s in sorted(self.series.items()):
            labels = [self.service, model, self.version, route]
            for code, n in sorted(s.codes.items()):
                requests.add_metric([*labels, str(code)], n)
            for name, family in hists.items():
                h: _Histogram = getattr(s, name)
                if h.count or name != "queue":  # queue time only where the application reports it
                    family.add_metric(labels, h.samples(), h.sum)
            tokens_in.add_metric(labels, s.input_tokens)
            tokens_out.add_metric(labels, s.output_tokens)
        return [f for f in (requests, *hists.values(), tokens_in, tokens_out) if f.samples]


def _family(spec: catalog.MetricSpec) -> HistogramMetricFamily:
    return HistogramMetricFamily(spec.name, spec.help, labels=spec.labels, unit=spec.unit)


def _counter(spec: catalog.MetricSpec) -> CounterMetricFamily:
    return CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
