"""Exposition: the custom collector, an ASGI ``/metrics`` app, a standalone server, a reader.

Rendering is prometheus-client's (text format 0.0.4 and OpenMetrics 1.0), so
the output is whatever Prometheus and promtool expect. Its exposition module (which
loads ``http.server``, ``urllib`` and ``email``) is imported by the call that serves,
renders or parses, not by ``import inferwatch.sdk``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry
    from prometheus_client.metrics_core import Metric

__all__ = [
    "MetricsApp", "MetricsServer", "MonitorCollector", "metrics_asgi_app", "read_sample", "render",
]

log = logging.getLogger("inferwatch.sdk")

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


class MonitorCollector:
    """A prometheus-client collector: flushes the monitor, then yields its metric families."""

    def __init__(
        self, families: Callable[[], list[Metric]], flush: Callable[[float], bool], timeout: float,
    ) -> None:
        self._families, self._flush, self._timeout = families, flush, timeout
        self._registry: CollectorRegistry | None = None
        self._registry_lock = threading.Lock()

    def collect(self) -> Iterable[Metric]:
        """Everything recorded before the call (waits up to the timeout for the worker)."""
        if not self._flush(self._timeout):
            log.warning("inferwatch sdk: worker did not catch up within %.1fs; "
                        "serving the aggregates it has", self._timeout)
        return self._families()

    def describe(self) -> Iterable[Metric]:
        """The families (without waiting), so a registry can refuse duplicates."""
        return self._families()

    def registry(self) -> CollectorRegistry:
        """A registry holding only this collector, made (and prometheus-client imported) on the first call."""
        with self._registry_lock:
            if self._registry is None:
                from prometheus_client import CollectorRegistry

                self._registry = CollectorRegistry(auto_describe=True)
                self._registry.register(self)
            return self._registry


def render(registry: CollectorRegistry, openmetrics: bool = False) -> str:
    """``registry``'s exposition: Prometheus text format 0.0.4, or OpenMetrics 1.0."""
    from prometheus_client.exposition import generate_latest
    from prometheus_client.openmetrics.exposition import generate_latest as generate_openmetrics

    latest = generate_openmetrics if openmetrics else generate_latest
    return bytes(latest(registry)).decode("utf-8")


class MetricsApp:
    """An ASGI app answering GET/HEAD on any path with the exposition of ``registry``.

    An object rather than a function, so Starlette's ``Route("/metrics", MetricsApp(...))``
    treats it as an ASGI app.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        if scope.get("method", "GET") not in ("GET", "HEAD"):
            await _respond(send, 405, b"method not allowed\n", "text/plain; charset=utf-8",
                           [(b"allow", b"GET, HEAD")])
            return
        from prometheus_client.exposition import choose_encoder

        accept = ",".join(v.decode("latin-1") for k, v in scope.get("headers", ()) if k.lower() == b"accept")
        encoder, content_type = choose_encoder(accept)
        body = encoder(self.registry)
        await _respond(send, 200, b"" if scope.get("method") == "HEAD" else body, content_type)


def metrics_asgi_app(registry: CollectorRegistry) -> MetricsApp:
    """A ``MetricsApp`` over ``registry``."""
    return MetricsApp(registry)


async def _respond(
    send: Send, status: int, body: bytes, content_type: str, extra: list[tuple[bytes, bytes]] | None = None,
) -> None:
    headers = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers + (extra or [])})
    await send({"type": "http.response.body", "body": body})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


@dataclass
class MetricsServer:
    """A standalone ``/metrics`` HTTP server on a thread; ``close()`` stops it."""

    host: str
    port: int
    _httpd: Any
    _thread: threading.Thread

    @classmethod
    def start(cls, registry: CollectorRegistry, host: str, port: int) -> MetricsServer:
        """Bind ``host:port`` (0 picks a free port) and serve from a daemon thread."""
        from prometheus_client.exposition import start_http_server

        httpd, thread = start_http_server(port, addr=host, registry=registry)
        return cls(host, int(httpd.server_address[1]), httpd, thread)

    @property
    def url(self) -> str:
        """``http://host:port/metrics``."""
        return f"http://{self.host}:{self.port}/metrics"

    def close(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self._httpd.shutdown()
            self._thread.join(5.0)
        self._httpd.server_close()

    def __enter__(self) -> MetricsServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_sample(text: str, name: str, labels: Mapping[str, str] | None = None) -> float | None:
    """The value of the sample ``name{labels}`` in a Prometheus text exposition, or None.

    >>> read_sample('# TYPE x_total counter\\nx_total{a="1"} 3\\n', "x_total", {"a": "1"})
    3.0
    """
    from prometheus_client.parser import text_string_to_metric_families

    want = dict(labels or {})
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name and sample.labels == want:
                return float(sample.value)
    return None
