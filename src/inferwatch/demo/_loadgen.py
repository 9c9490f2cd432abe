"""A load generator: worker threads posting feature rows to ``/predict`` at a bounded rate.

Workers share one schedule (one slot every 1/rate s); a worker that falls
behind does not burst to catch up, so the rate is an upper bound. With
``threads`` workers and a service taking L seconds, the rate is at most
``threads / L``: injected latency lowers the QPS, as with real clients.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter
from typing import TYPE_CHECKING

import httpx

from inferwatch.demo._model import FeatureGenerator
from inferwatch.model import Clock, SystemClock

if TYPE_CHECKING:
    from inferwatch.tracing import Tracing

__all__ = ["LoadGenerator"]

log = logging.getLogger("inferwatch.demo")

TRANSPORT_ERROR = "transport"
"""The outcome key of a request that got no HTTP response (refused, timed out)."""


class LoadGenerator:
    """Posts ``{"features": row}`` to ``url`` from ``threads`` workers, at most ``rate`` per second."""

    def __init__(
        self,
        url: str,
        features: FeatureGenerator,
        *,
        rate: float,
        threads: int = 16,
        timeout_s: float = 10.0,
        clock: Clock | None = None,
        transport: httpx.BaseTransport | None = None,
        tracing: Tracing | None = None,
    ) -> None:
        if rate <= 0 or threads < 1:
            raise ValueError(f"load generator: rate must be > 0 and threads >= 1 (got {rate}, {threads})")
        self.url, self.features, self.rate = url, features, rate
        self._threads_n, self._timeout, self._transport = threads, timeout_s, transport
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._next = 0.0
        self._outcomes: Counter[str] = Counter()
        self._answered = threading.Event()
        self._threads: list[threading.Thread] = []
        self._client: httpx.Client | None = None
        self._tracing = tracing
        """When set, each request is a CLIENT span whose context the service continues (the trace's root)."""

    def start(self) -> None:
        """Start the workers (once)."""
        if self._threads:
            return
        self._next = self._clock.monotonic()
        # One client shared by the workers (httpx.Client is thread-safe): creating one per
        # thread costs an SSL context each, which delays the start by seconds on a busy host.
        limits = httpx.Limits(max_connections=self._threads_n, max_keepalive_connections=self._threads_n)
        self._client = httpx.Client(timeout=self._timeout, transport=self._transport, limits=limits)
        if self._tracing is not None:
            from inferwatch.tracing import instrument_httpx

            instrument_httpx(self._client)
        self._threads = [
            threading.Thread(target=self._work, name=f"inferwatch-load-{i}", daemon=True)
            for i in range(self._threads_n)
        ]
        for t in self._threads:
            t.start()

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the workers and wait for in-flight requests (bounded by ``timeout``)."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout)
        if self._client is not None:
            self._client.close()

    def wait_answered(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` seconds) until a first request has its outcome; whether one has."""
        return self._answered.wait(timeout)

    def outcomes(self) -> dict[str, int]:
        """Requests sent so far by outcome: the status code as a string, or ``transport``."""
        with self._lock:
            return dict(self._outcomes)

    def _slot(self) -> float:
        """Seconds to wait for this worker's next slot on the shared schedule."""
        with self._lock:
            now = self._clock.monotonic()
            slot = max(self._next, now)
            self._next = slot + 1.0 / self.rate
        return slot - now

    def _work(self) -> None:
        client = self._client
        assert client is not None
        while not self._stop.is_set():
            if self._clock.wait(self._stop, self._slot()):
                return
            key = self._send(client)
            with self._lock:
                self._outcomes[key] += 1
            self._answered.set()

    def _send(self, client: httpx.Client) -> str:
        if self._tracing is None:
            return self._post(client)
        from opentelemetry.trace import SpanKind, Status, StatusCode

        with self._tracing.tracer.start_as_current_span("POST /predict", kind=SpanKind.CLIENT) as span:
            key = self._post(client)
            span.set_attribute("http.response.status_code", int(key) if key.isdigit() else 0)
            if not key.isdigit() or int(key) >= 500:
                span.set_status(Status(StatusCode.ERROR, key))
        return key

    def _post(self, client: httpx.Client) -> str:
        try:
            return str(client.post(self.url, json={"features": self.features.row()}).status_code)
        except httpx.HTTPError as exc:
            log.debug("load generator: %s", exc)
            return TRANSPORT_ERROR
