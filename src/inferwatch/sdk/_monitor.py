"""``Monitor``: the SDK's one object: record on the hot path, aggregate behind, expose."""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from inferwatch._exceptions import ConfigError
from inferwatch.model import Clock, SystemClock
from inferwatch.sdk._aggregator import Aggregator, Mergeable, merge_sketches
from inferwatch.sdk._config import SdkConfig, sdk_config
from inferwatch.sdk._exposition import MetricsApp, MetricsServer, MonitorCollector, render
from inferwatch.sdk._generation import GenerationSettings
from inferwatch.sdk._monitor_llm import GenerationMethods
from inferwatch.sdk._monitor_parts import (
    COLLECT_FLUSH_TIMEOUT_S,
    EMBEDDING,
    LABEL,
    OUTCOME,
    PREDICTION,
    PREDICTION_ID,
    REQUEST,
    REQUEST_COUNT,
    REQUEST_EXEMPLAR,
    aggregate,
    collect_one,
    multiprocess_store,
    own_families,
    tracing_for,
)
from inferwatch.sdk._recorder import Recorder, group_by_kind
from inferwatch.sdk._requests import RequestAggregates
from inferwatch.sdk._tracking import Tracking
from inferwatch.sdk.runtimes import RuntimeMethods

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

    from inferwatch.sdk._hooks import AsgiApp, RouteOf, WsgiApp
    from inferwatch.sdk._label_poller import Fetch, LabelPoller
    from inferwatch.sdk._stage import Stage
    from inferwatch.sdk._tracing import Tracing
    from inferwatch.sdk.multiproc import MultiprocStore

__all__ = ["Monitor", "Tracking"]

log = logging.getLogger("inferwatch.sdk")


class Monitor(GenerationMethods, RuntimeMethods):
    """Service metrics for one model server; recording never blocks and never raises.

    >>> m = Monitor(service="ranker", model="ctr", version="v3")
    >>> for ms in (4, 12, 700):
    ...     m.record_request(route="/predict", status=200, duration_s=ms / 1000)
    >>> m.record_request(route="/predict", status=503, duration_s=0.002)
    >>> m.get_sample_value("inferwatch_requests_total", {"route": "/predict", "code": "200",
    ...     "service": "ranker", "model": "ctr", "version": "v3"})
    3.0
    >>> m.get_sample_value("inferwatch_request_duration_seconds_bucket", {"route": "/predict",
    ...     "le": "0.025", "service": "ranker", "model": "ctr", "version": "v3"})
    3.0
    >>> m.close()

    With ``multiprocess_dir`` (or ``INFERWATCH_MULTIPROC_DIR``) every exposition answers for
    all the worker processes sharing that directory (see ``inferwatch.sdk.multiproc._multiproc``).
    """

    def __init__(
        self,
        service: str,
        model: str = "",
        version: str = "",
        *,
        config: SdkConfig | None = None,
        clock: Clock | None = None,
        aggregators: Sequence[Aggregator] = (),
        tracing: bool | Tracing = False,
        multiprocess_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        for field, value in (("service", service), ("model", model), ("version", version)):
            if not isinstance(value, str):
                raise ConfigError(f"Monitor: {field} must be a string, got {value!r}")
        if not service:
            raise ConfigError("Monitor: service must not be empty")
        cfg = sdk_config(config)  # also the YAML's ``sdk:`` section (inferwatch.settings.SdkConfig)
        self.service, self.model, self.version = service, model, version
        self.config = cfg
        self._clock: Clock = clock if clock is not None else SystemClock()
        # the real clock's monotonic is time.monotonic itself: one call less on every hot path
        self._mono = time.monotonic if type(self._clock) is SystemClock else self._clock.monotonic
        self._lock = threading.Lock()  # aggregates; aggregators' consume and collect
        self._requests = RequestAggregates(cfg.buckets)
        self._consumers: dict[str, list[Aggregator]] = {}
        self._aggregators: list[Aggregator] = []
        self._counts_lock = threading.Lock()  # inflight gauge and hot-path rejects
        self._inflight = 0
        self._invalid: dict[str, int] = {}
        self._closed = False
        self._cap = cfg.queue_size
        self.multiprocess: MultiprocStore | None = multiprocess_store(
            multiprocess_dir, self._shared, self.flush)
        """The shared store of all worker processes (None: this process only; see ``_multiproc``)."""
        self._recorder = Recorder(cfg.queue_size, self._handle, name=f"inferwatch-sdk-{service}")
        self._queue = self._recorder.queue
        families = self._families if self.multiprocess is None else self._merged
        self.collector = MonitorCollector(families, self.flush, COLLECT_FLUSH_TIMEOUT_S)
        """A prometheus-client collector over this monitor's aggregates (register it anywhere)."""
        for aggregator in aggregators:
            self.attach(aggregator)
        self._stages_attached = False
        self._pollers: list[LabelPoller] = []  # poll_labels's threads, stopped by close()
        self._generations_attached = self._engine_attached = False
        self._runtimes = None  # RuntimeAggregates, attached by the first instrument_onnx / _tensorrt
        self.generation_settings = GenerationSettings()
        self._attach_lock = threading.Lock()  # taken before _lock, never under another lock
        self._owns_tracing = tracing is True
        self.tracing: Tracing | None = tracing_for(service, tracing)
        """The tracing this monitor's middleware and stages use (None: metrics only)."""
        if self.tracing is not None:
            from inferwatch.sdk._tracing_metrics import TracingMetrics

            self.attach(TracingMetrics(self.tracing))
        if self.multiprocess is not None:
            self.multiprocess.start()  # publishes now, and whenever another worker's scrape asks

    # --- hot path ---------------------------------------------------------------------------
    def record_request(self, route: str, status: int, duration_s: float) -> None:
        """Record one handled request (enqueue only; a full queue drops and counts)."""
        if len(self._queue) < self._cap:
            self._queue.append((REQUEST, route, status, duration_s))
        else:
            self._recorder.drop(REQUEST)

    def count_request(self, route: str, status: int) -> None:
        """Count a request by code without a latency (a generation: see ``RequestAggregates.add_counts``)."""
        if len(self._queue) < self._cap:
            self._queue.append((REQUEST_COUNT, route, status))
        else:
            self._recorder.drop(REQUEST)

    def record_exemplar(self, route: str, duration_s: float, trace_id: str) -> None:
        """Mark a recorded request as its latency bucket's exemplar (a kept trace's 32-hex id)."""
        self.observe(REQUEST_EXEMPLAR, (route, duration_s, trace_id))

    def track(self, route: str) -> Tracking:
        """A context manager timing its block as one request; an exception counts as 500."""
        return Tracking(self, route)

    def stage(self, name: str) -> Stage:
        """Time a pipeline stage (``with`` or decorator): a child span when tracing, always a histogram."""
        from inferwatch.sdk._stage import Stage, StageAggregates

        if not self._stages_attached:
            with self._lock:  # attach takes the lock too: decide first, attach after
                first, self._stages_attached = not self._stages_attached, True
            if first:
                self.attach(StageAggregates((self.service, self.model, self.version), self.config.buckets))
        return Stage(self, name)

    def instrument_httpx(self, client: Any) -> Any:
        """Make ``client`` (httpx, sync or async) send the current trace context on every call."""
        from inferwatch.sdk._httpx import instrument_httpx

        return instrument_httpx(client)

    def observe_prediction(
        self, features: Any, confidence: float | None = None, probabilities: Any = None,
        request_id: str | None = None,
    ) -> None:
        """Hand a prediction to the aggregators of kind ``prediction`` (no-op without one).

        With ``request_id`` it is also kept for ``observe_label`` (realized performance).
        """
        if PREDICTION in self._consumers:
            self.observe(PREDICTION, (features, confidence, probabilities))
        if request_id is not None and PREDICTION_ID in self._consumers:
            self.observe(PREDICTION_ID, (request_id, confidence, probabilities))

    def observe_label(self, request_id: str, label: Any) -> None:
        """Hand the true class of an earlier ``observe_prediction(..., request_id=...)`` (any time later)."""
        if LABEL in self._consumers:
            self.observe(LABEL, (request_id, label))

    def poll_labels(self, url: str, *, model: str | None = None, token: str | None = None,
                    interval: float = 30.0, batch: int = 1000, fetch: Fetch | None = None,
                    start: bool = True) -> LabelPoller:
        """Feed ``observe_label`` the labels POSTed to the server at ``url`` (``/api/v1/outcomes``)
        by other processes, polled every ``interval`` seconds (``model``: this model's only)."""
        from inferwatch.sdk._label_poller import LabelPoller

        if self._closed:  # close() has stopped the pollers it knew: a new thread would run forever
            raise ConfigError("poll_labels: the monitor is closed")
        if LABEL not in self._consumers:  # observe_label drops them: the cursor would move past them all
            log.warning("poll_labels: no aggregator takes labels (attach RealizedPerformance first); "
                        "the labels it polls are dropped")
        poller = LabelPoller(self, url, clock=self._clock, model=model, token=token, interval=interval,
                             batch=batch, fetch=fetch)
        self._pollers.append(poller)
        return poller.start() if start else poller

    def observe_embedding(self, name: str, vector: Any) -> None:
        """Hand one embedding (a text's or image's vector) to the aggregators of kind ``embedding``."""
        if EMBEDDING in self._consumers:
            self.observe(EMBEDDING, (name, vector))

    def observe_outcome(self, experiment: str, variant: str, converted: Any) -> None:
        """Hand a business outcome to the aggregators of kind ``outcome``."""
        if OUTCOME not in self._consumers:
            return
        try:
            flag = bool(converted)
        except Exception:  # e.g. a numpy array: counted, never raised into the request
            self._reject(OUTCOME)
            return
        self.observe(OUTCOME, (experiment, variant, flag))

    def observe(self, kind: str, payload: Any) -> None:
        """Enqueue ``payload`` for the aggregators attached for ``kind``."""
        if len(self._queue) < self._cap:
            self._queue.append((kind, payload))
        else:
            self._recorder.drop(kind)

    def _reject(self, kind: str) -> None:
        with self._counts_lock:
            self._invalid[kind] = self._invalid.get(kind, 0) + 1

    def add_inflight(self, delta: int) -> None:
        """Move the ``inferwatch_inflight_requests`` gauge by ``delta`` (the middleware's hook)."""
        with self._counts_lock:
            self._inflight += delta

    def monotonic(self) -> float:
        """The monitor's monotonic clock, seconds (durations of requests, stages and generations)."""
        return self._mono()

    # The names the integrations used before the public hooks (kept for code written against them).
    _inflight_add = add_inflight
    _count_request = count_request
    _attach_generations = GenerationMethods.enable_generations

    # --- background -------------------------------------------------------------------------
    def attach(self, aggregator: Aggregator) -> None:
        """Feed ``aggregator`` the observations of its kinds and expose its metrics."""
        if not isinstance(aggregator, Aggregator):
            raise ConfigError(f"Monitor.attach: {aggregator!r} does not implement Aggregator")
        with self._lock:
            self._aggregators.append(aggregator)
            for kind in aggregator.kinds:
                self._consumers[kind] = [*self._consumers.get(kind, ()), aggregator]

    def _handle(self, batch: list[tuple[Any, ...]]) -> None:
        groups = group_by_kind(batch)
        if groups:
            now = self._clock.now()
            with self._lock:
                aggregate(groups, self._requests, self._consumers, now)

    # --- exposition -------------------------------------------------------------------------
    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every observation recorded before the call is aggregated."""
        return self._recorder.flush(timeout)

    @property
    def registry(self) -> CollectorRegistry:
        """A prometheus-client registry holding only ``collector`` (made by the first exposition)."""
        return self.collector.registry()

    def metrics_text(self, openmetrics: bool = False) -> str:
        """The exposition (Prometheus text, or OpenMetrics), after a flush."""
        return render(self.registry, openmetrics)

    def get_sample_value(self, name: str, labels: Mapping[str, str] | None = None) -> float | None:
        """One sample's value from the exposition (None when absent); a read helper for tests."""
        value = self.registry.get_sample_value(name, dict(labels or {}))
        return None if value is None else float(value)

    def _shared(self) -> list[Metric]:
        """What this worker publishes to the others: mergeable aggregators share their sketches."""
        return self._families(shared=True)

    def _merged(self) -> list[Metric]:
        """All workers' families, the sketches turned into gauges computed once on their sum."""
        assert self.multiprocess is not None
        families = self.multiprocess.families()
        with self._lock:
            mergeables = [a for a in self._aggregators if isinstance(a, Mergeable)]
            return merge_sketches(families, mergeables, self._clock.now())

    def _families(self, shared: bool = False) -> list[Metric]:
        svc = (self.service, self.model, self.version)
        with self._lock:
            out = list(self._requests.families(svc))
            invalid_requests = self._requests.invalid
            extra = [m for a in self._aggregators for m in collect_one(a, shared, self._clock.now())]
        with self._counts_lock:
            inflight, invalid = self._inflight, dict(self._invalid)
        invalid[REQUEST] = invalid.get(REQUEST, 0) + invalid_requests
        dropped = {REQUEST: 0, **self._recorder.dropped_counts()}
        errors = self.multiprocess.errors if self.multiprocess is not None else None
        return out + own_families(svc, inflight, dropped, invalid, self._recorder.capacity, errors) + extra

    # --- integration ------------------------------------------------------------------------
    def asgi(
        self, app: AsgiApp, route: RouteOf | None = None, generative: Iterable[str] = (),
        exclude: Iterable[str] | None = None,
    ) -> AsgiApp:
        """Wrap an ASGI app (Starlette, FastAPI) so each HTTP request is recorded.

        Streamed token responses (``text/event-stream``, or the ``generative`` routes)
        are also recorded as generations, first body chunk = first token. Paths in
        ``exclude`` (default: ``/metrics`` and the health probes) are not recorded.
        """
        from inferwatch.sdk._middleware import EXCLUDED_PATHS, AsgiMiddleware

        return AsgiMiddleware(app, self, route, generative, EXCLUDED_PATHS if exclude is None else exclude)

    def wsgi(
        self, app: WsgiApp, route: Callable[[dict[str, Any]], str] | None = None,
        exclude: Iterable[str] | None = None,
    ) -> WsgiApp:
        """Wrap a WSGI app (Flask, Django) so each request is recorded (``exclude``: as for ``asgi``)."""
        from inferwatch.sdk._middleware import EXCLUDED_PATHS, WsgiMiddleware

        return WsgiMiddleware(app, self, route, EXCLUDED_PATHS if exclude is None else exclude)

    def metrics_app(self) -> MetricsApp:
        """An ASGI app serving the exposition (OpenMetrics when the Accept header asks)."""
        return MetricsApp(self.registry)

    def serve_metrics(self, port: int = 0, host: str = "127.0.0.1") -> MetricsServer:
        """Serve ``/metrics`` from a thread; ``port=0`` picks a free port (see ``.port``)."""
        return MetricsServer.start(self.registry, host, port)

    # --- lifecycle --------------------------------------------------------------------------
    def close(self, timeout: float = 5.0) -> None:
        """Aggregate what is queued and stop the background thread (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for poller in self._pollers:
            poller.stop(timeout)
        if self.judge_worker is not None:
            self.judge_worker.close(timeout)
        self._cap = 0  # later observations are counted as dropped
        self._recorder.close(timeout)
        if self.multiprocess is not None:
            self.multiprocess.close()
        if self._owns_tracing and self.tracing is not None:
            self.tracing.shutdown()

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "running"
        return f"Monitor(service={self.service!r}, model={self.model!r}, version={self.version!r}, {state})"
