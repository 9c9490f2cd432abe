"""The parts of ``Monitor`` that need none of its state: a batch into the aggregates, its own metric
families, one aggregator's collection, the multiprocess store and tracing it is asked for."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inferwatch._env import ENV_MULTIPROC_DIR
from inferwatch._exceptions import ConfigError
from inferwatch.model import metrics as catalog
from inferwatch.sdk._aggregator import Aggregator, Mergeable
from inferwatch.sdk._requests import RequestAggregates

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

    from inferwatch.sdk._tracing import Tracing
    from inferwatch.sdk.multiproc import MultiprocStore

__all__ = ["aggregate", "collect_one", "multiprocess_store", "own_families", "tracing_for"]

log = logging.getLogger("inferwatch.sdk")
REQUEST = "request"
REQUEST_EXEMPLAR = "request_exemplar"
REQUEST_COUNT = "request_count"
PREDICTION = "prediction"
PREDICTION_ID = "prediction_id"  # a prediction kept for its delayed label
LABEL = "label"  # a delayed label, joined to its prediction by request id
OUTCOME = "outcome"
EMBEDDING = "embedding"  # (name, vector): quality.EmbeddingDriftAggregator
COLLECT_FLUSH_TIMEOUT_S = 1.0
"""How long an exposition waits for the worker to catch up before serving what it has."""


def aggregate(groups: dict[str, list[tuple[Any, ...]]], requests: RequestAggregates,
              consumers: Mapping[str, Sequence[Aggregator]], now: float) -> None:
    """One batch of observations, grouped by kind, into the request aggregates and the aggregators."""
    batch = groups.pop(REQUEST, None)
    if batch:
        requests.add_batch(batch)
    counts = groups.pop(REQUEST_COUNT, None)
    if counts:
        requests.add_counts(counts)
    exemplars = groups.pop(REQUEST_EXEMPLAR, None)
    if exemplars:
        requests.add_exemplars([item[1] for item in exemplars], now)
    for kind, items in groups.items():
        payloads = [item[1] for item in items]
        for aggregator in consumers.get(kind, ()):
            try:
                aggregator.consume(kind, payloads, now)
            except Exception:
                log.exception("inferwatch sdk: aggregator %r failed on %d %s; continuing",
                              aggregator, len(payloads), kind)


def own_families(svc: tuple[str, str, str], inflight: int, dropped: Mapping[str, int],
                 invalid: Mapping[str, int], capacity: int, multiproc_errors: int | None) -> list[Metric]:
    """The SDK's own families: in-flight requests, drops, rejects, queue capacity, multiprocess errors."""
    service, model, version = svc
    out = [
        _gauge(catalog.INFLIGHT_REQUESTS, ("model", "service", "version"),
               {(model, service, version): inflight}),
        _counter(catalog.SDK_DROPPED_TOTAL, ("kind", "service"),
                 {(k, service): n for k, n in sorted(dropped.items())}),
        _counter(catalog.SDK_INVALID_TOTAL, ("kind", "service"),
                 {(k, service): n for k, n in sorted(invalid.items())}),
        _gauge(catalog.SDK_QUEUE_CAPACITY, ("service",), {(service,): capacity}),
    ]
    if multiproc_errors is not None:
        out.append(_counter(catalog.SDK_ERRORS_TOTAL, ("kind", "service"),
                            {("multiprocess", service): multiproc_errors}))
    return out


def collect_one(aggregator: Aggregator, shared: bool, now: float) -> list[Metric]:
    """One aggregator's families (its sketches when ``shared``); a failing one is logged and skipped."""
    try:
        if shared and isinstance(aggregator, Mergeable):
            return list(aggregator.share(now))
        return list(aggregator.collect(now))
    except Exception:
        log.exception("inferwatch sdk: aggregator %r failed to collect; skipped", aggregator)
        return []


def multiprocess_store(
    directory: str | os.PathLike[str] | None,
    local: Callable[[], list[Metric]],
    flush: Callable[[float], bool],
) -> MultiprocStore | None:
    """The shared store when ``directory`` (or ``INFERWATCH_MULTIPROC_DIR``) names one."""
    directory = directory if directory is not None else os.environ.get(ENV_MULTIPROC_DIR) or None
    if directory is None:
        return None
    # imported only in multiprocess mode: psutil, sqlite3 and json stay off ``import inferwatch.sdk``
    from inferwatch.sdk.multiproc import MultiprocStore

    return MultiprocStore(directory, local, flush)


def tracing_for(service: str, tracing: bool | Tracing) -> Tracing | None:
    """``True`` sets tracing up for ``service`` (import guarded: the hint names the extra)."""
    if tracing is False:
        return None
    if tracing is not True:
        return tracing
    try:
        from inferwatch.sdk._tracing import setup
    except ImportError as exc:  # pragma: no cover - the tracing extra is missing
        from inferwatch.sdk._tracing import INSTALL_HINT

        raise ConfigError(INSTALL_HINT) from exc
    return setup(service)


def _counter(spec: catalog.MetricSpec, labels: tuple[str, ...], values: dict[tuple[str, ...], int]) -> Metric:
    from prometheus_client.core import CounterMetricFamily  # at exposition, not at import

    family = CounterMetricFamily(spec.family, spec.help, labels=labels)
    for key, n in values.items():
        family.add_metric(key, n)
    return family


def _gauge(spec: catalog.MetricSpec, labels: tuple[str, ...], values: dict[tuple[str, ...], float]) -> Metric:
    from prometheus_client.core import GaugeMetricFamily  # at exposition, not at import

    family = GaugeMetricFamily(spec.name, spec.help, labels=labels)
    for key, v in values.items():
        family.add_metric(key, v)
    return family
