"""Pipeline stages: ``with monitor.stage("feature_store"):`` times a block, traces it, counts errors.

A stage is a child span of the current span (the request's server span under
the middleware) when tracing is on, and always an observation for the
``inferwatch_stage_duration_seconds`` histogram, aggregated on the SDK's
background thread by ``StageAggregates``. Nothing here imports OpenTelemetry
unless tracing is configured, so instrumented code runs without the extra.
"""

from __future__ import annotations

import functools
import inspect
import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from inferwatch.model import metrics as catalog

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from inferwatch.sdk._hooks import MonitorHooks

__all__ = ["MAX_STAGES", "STAGE", "Stage", "StageAggregates"]

STAGE = "stage"
"""The observation kind stages enqueue: ``(name, duration_s, failed, trace_id or "")``."""

MAX_STAGES = 100
"""Distinct stage names kept per monitor; more are counted as invalid (bounded cardinality)."""

F = TypeVar("F", bound=Callable[..., Any])


class Stage:
    """Times one stage of a request; usable as ``with`` block or as decorator (sync and async).

    One ``Stage`` times one block at a time: write ``with monitor.stage(name):``
    at each use (the decorator makes a fresh one per call), not a shared object.

    >>> from inferwatch.sdk import Monitor
    >>> m = Monitor(service="ranker", model="ctr", version="v3")
    >>> with m.stage("feature_store"):
    ...     pass
    >>> m.get_sample_value("inferwatch_stage_duration_seconds_count", {"stage": "feature_store",
    ...     "service": "ranker", "model": "ctr", "version": "v3"})
    1.0
    >>> m.close()
    """

    __slots__ = ("_monitor", "_name", "_span", "_t0", "_token")

    def __init__(self, monitor: MonitorHooks, name: str) -> None:
        self._monitor, self._name = monitor, name
        self._span: Any = None
        self._token: Any = None
        self._t0 = 0.0

    def __enter__(self) -> Stage:
        tracing = self._monitor.tracing
        if tracing is not None:
            from opentelemetry import context, trace

            self._span = tracing.tracer.start_span(self._name, attributes={"inferwatch.stage": self._name})
            self._token = context.attach(trace.set_span_in_context(self._span))
        self._t0 = self._monitor.monotonic()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        m = self._monitor
        duration, failed, span = m.monotonic() - self._t0, exc_type is not None, self._span
        if span is None:
            m.observe(STAGE, (self._name, duration, failed, ""))
            return
        from opentelemetry import context
        from opentelemetry.trace import Status, StatusCode

        if exc is not None:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, f"{exc_type.__name__ if exc_type else ''}: {exc}"))
        span.end()
        context.detach(self._token)
        tracing = m.tracing
        trace_id = span.get_span_context().trace_id
        # An exemplar must point to a trace that will be exported: only those are kept as exemplars.
        kept = tracing is not None and tracing.will_keep(trace_id, duration, failed, span)
        m.observe(STAGE, (self._name, duration, failed, format(trace_id, "032x") if kept else ""))

    def __call__(self, fn: F) -> F:
        """Decorate ``fn`` (a function or coroutine function): each call is one stage."""
        monitor, name = self._monitor, self._name
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                with Stage(monitor, name):
                    return await fn(*args, **kwargs)

            return cast(F, run_async)

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            with Stage(monitor, name):
                return fn(*args, **kwargs)

        return cast(F, run)


@dataclass
class _Histogram:
    buckets: list[int]
    sum: float = 0.0
    count: int = 0
    errors: int = 0
    exemplars: dict[int, tuple[str, float, float]] = field(default_factory=dict)
    """The latest kept trace per bucket index: ``(trace_id, seconds, time)`` (OpenMetrics exemplars)."""


@dataclass
class StageAggregates:
    """The stage histograms of one monitor (an ``Aggregator`` of kind ``stage``)."""

    service: tuple[str, str, str]
    bounds: tuple[float, ...]
    kinds: tuple[str, ...] = (STAGE,)
    stages: dict[str, _Histogram] = field(default_factory=dict)
    invalid: int = 0

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add ``(name, duration_s, failed, trace_id)`` observations; invalid ones are counted and skipped."""
        for name, duration, failed, trace_id in payloads:
            if not isinstance(name, str) or not 0.0 <= duration < math.inf:
                self.invalid += 1
                continue
            h = self.stages.get(name)
            if h is None:
                if len(self.stages) >= MAX_STAGES:
                    self.invalid += 1
                    continue
                h = self.stages[name] = _Histogram([0] * (len(self.bounds) + 1))
            bucket = bisect_left(self.bounds, duration)
            h.buckets[bucket] += 1
            if trace_id:
                h.exemplars[bucket] = (trace_id, duration, now)
            h.sum += duration
            h.count += 1
            h.errors += bool(failed)

    def collect(self, now: float) -> Iterable[Metric]:
        """The stage-duration histogram and the stage-error counter."""
        # prometheus-client is imported where families are built, not by ``import inferwatch.sdk``
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
        from prometheus_client.samples import Exemplar

        spec, err_spec = catalog.STAGE_DURATION, catalog.STAGE_ERRORS_TOTAL
        hist = HistogramMetricFamily(spec.name, spec.help, labels=spec.labels, unit="seconds")
        errors = CounterMetricFamily(err_spec.family, err_spec.help, labels=err_spec.labels)
        uppers = [*(_le(b) for b in self.bounds), "+Inf"]
        for name, h in sorted(self.stages.items()):
            cumulative: list[Any] = []
            total = 0
            for i, (upper, n) in enumerate(zip(uppers, h.buckets, strict=True)):
                total += n
                kept = h.exemplars.get(i)
                if kept is None:
                    cumulative.append((upper, total))
                else:
                    trace_id, value, at = kept
                    cumulative.append((upper, total, Exemplar({"trace_id": trace_id}, value, at)))
            hist.add_metric([*self.service, name], cumulative, h.sum)
            errors.add_metric([*self.service, name], h.errors)
        return [hist, errors]


def _le(bound: float) -> str:
    return repr(float(bound))
