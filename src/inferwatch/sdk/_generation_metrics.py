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

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Exemplar

from inferwatch.model import metrics as catalog
from inferwatch.sdk._generation import (
    CLIENT_CLOSED,
    DURATION_BUCKETS,
    GENERATION,
    GENERATION_EXEMPLAR,
    TOKEN_BUCKETS,
    TOKENS_PER_SECOND_BUCKETS,
    TPOT_BUCKETS,
    TTFT_BUCKETS,
    GenerationSettings,
    time_per_output_token,
    valid,
)
from inferwatch.sdk._requests import MAX_ROUTES, OTHER_ROUTE

MAX_TENANTS = 100
"""Distinct (model, tenant) pairs kept; later tenants share ``<other>`` (bounded cardinality)."""

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
    prompt: _Histogram = field(default_factory=lambda: _Histogram(TOKEN_BUCKETS))
    completion: _Histogram = field(default_factory=lambda: _Histogram(TOKEN_BUCKETS))
    codes: dict[int, int] = field(default_factory=dict)
    finish: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    good: int = 0

    def add(self, status: int, ttft: float | None, duration: float, tokens_in: int, tokens_out: int,
            queue: float | None, finish: str, targets: GenerationSettings) -> None:
        self.codes[status] = self.codes.get(status, 0) + 1
        reason = finish or ("abort" if status == CLIENT_CLOSED else "error" if status >= 400 else "unknown")
        self.finish[reason] = self.finish.get(reason, 0) + 1
        self.duration.observe(duration)
        self.input_tokens += tokens_in
        self.output_tokens += tokens_out
        self.prompt.observe(tokens_in)
        self.completion.observe(tokens_out)
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
        # goodput: first token in time and every later one too (a one-token answer has no TPOT)
        if ttft is not None and ttft <= targets.ttft_s and (tpot is None or tpot <= targets.tpot_s):
            self.good += 1

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
    settings: Callable[[], GenerationSettings] = GenerationSettings
    """The current targets and prices (read per batch: the monitor replaces them whole)."""
    tenants: dict[tuple[str, str], int] = field(default_factory=dict)
    """Requests per (model, tenant)."""
    costs: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """Cost per (model, tenant, currency)."""

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add ``(route, model, status, ttft_s, duration_s, input_tokens, output_tokens, queue_s)`` items.

        Checked here, on the background thread, so the request thread only enqueues.
        """
        if kind == GENERATION_EXEMPLAR:
            self._exemplars(payloads, now)
            return
        settings = self.settings()
        for item in payloads:
            if len(item) != 10 or not valid(*item):
                self.reject(GENERATION)
                continue
            route, model, status, ttft, duration, tokens_in, tokens_out, queue, finish, tenant = item
            self._series(route, model).add(
                int(status), None if ttft is None else float(ttft), float(duration), int(tokens_in),
                int(tokens_out), None if queue is None else float(queue), finish, settings)
            self._tenant(model, tenant or "default", int(tokens_in), int(tokens_out), settings)

    def _tenant(self, model: str, tenant: str, tokens_in: int, tokens_out: int,
                settings: GenerationSettings) -> None:
        key = (model, tenant)
        if key not in self.tenants and len(self.tenants) >= MAX_TENANTS - 1:
            key = (model, OTHER_ROUTE)  # bounded cardinality, as routes are
        self.tenants[key] = self.tenants.get(key, 0) + 1
        price = settings.prices.get(model)
        if price is not None:
            cost_key = (*key, price.currency)
            self.costs[cost_key] = self.costs.get(cost_key, 0.0) + price.cost(tokens_in, tokens_out)

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
            ("queue", c.GENERATION_QUEUE), ("speed", c.GENERATION_TOKENS_PER_SECOND),
            ("prompt", c.GENERATION_REQUEST_INPUT_TOKENS),
            ("completion", c.GENERATION_REQUEST_OUTPUT_TOKENS))}
        tokens_in = _counter(c.GENERATION_INPUT_TOKENS_TOTAL)
        tokens_out = _counter(c.GENERATION_OUTPUT_TOKENS_TOTAL)
        finish, good = _counter(c.GENERATION_FINISH_REASONS_TOTAL), _counter(c.GENERATION_GOOD_REQUESTS_TOTAL)
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
            for reason, n in sorted(s.finish.items()):
                finish.add_metric([*labels, reason], n)
            good.add_metric(labels, s.good)
        families = [requests, *hists.values(), tokens_in, tokens_out, finish, good, *self._per_tenant()]
        return [f for f in families if f.samples]

    def _per_tenant(self) -> list[Metric]:
        c = catalog
        settings = self.settings()
        targets = GaugeMetricFamily(c.GENERATION_TARGET_SECONDS.name, c.GENERATION_TARGET_SECONDS.help,
                                    labels=c.GENERATION_TARGET_SECONDS.labels)
        for model in sorted({model for _, model in self.series}):
            for name, v in (("time_to_first_token", settings.ttft_s),
                            ("time_per_output_token", settings.tpot_s)):
                targets.add_metric([self.service, model, self.version, name], v)
        tenants, costs = _counter(c.GENERATION_TENANT_REQUESTS_TOTAL), _counter(c.GENERATION_COST_TOTAL)
        for (model, tenant), n in sorted(self.tenants.items()):
            tenants.add_metric([self.service, model, self.version, tenant], n)
        for (model, tenant, currency), v in sorted(self.costs.items()):
            costs.add_metric([self.service, model, self.version, tenant, currency], v)
        spec = c.GENERATION_TENANT_DAILY_BUDGET
        budgets = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
        for (tenant, currency), amount in sorted(settings.budgets.items()):
            budgets.add_metric([self.service, tenant, currency], amount)
        return [targets, tenants, costs, budgets]


def _family(spec: catalog.MetricSpec) -> HistogramMetricFamily:
    return HistogramMetricFamily(spec.name, spec.help, labels=spec.labels, unit=spec.unit)


def _counter(spec: catalog.MetricSpec) -> CounterMetricFamily:
    return CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
