"""``setup``: a TracerProvider exporting tail-sampled traces over OTLP/HTTP, or the application's own.

Configuration follows OpenTelemetry's variables: ``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES`` name the service (the variable wins over the
argument, so operators can rename without a code change);
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT`` and
the other ``OTEL_EXPORTER_OTLP_*`` variables configure the exporter when
``endpoint`` is not given; ``OTEL_TRACES_SAMPLER`` set means the operator
chose head sampling, and then tail sampling is off. When the application has
already installed a TracerProvider, ``setup`` uses it and changes nothing.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
    from opentelemetry.trace import Tracer

    from inferwatch.sdk._sampling import TailSamplingProcessor

__all__ = ["INSTALL_HINT", "ServerSpan", "Tracing", "setup"]

log = logging.getLogger("inferwatch.tracing")

INSTALL_HINT = "tracing needs the OpenTelemetry SDK: pip install 'inferwatch[tracing]'"
TRACES_PATH = "/v1/traces"
INSTRUMENTATION = "inferwatch"


class Tracing:
    """What ``setup`` configured: the tracer stages and middleware use, and the pipeline behind it."""

    def __init__(self, service: str, tracer: Tracer, provider: Any, *, owned: bool,
                 sampler: TailSamplingProcessor | None = None,
                 exporter: CountingExporter | None = None) -> None:
        self.service, self.tracer, self.provider = service, tracer, provider
        self.owned = owned
        """Whether inferwatch built the provider (False: the application's own, left alone)."""
        self.sampler = sampler
        """The tail sampler (None with the application's provider or a head sampler from OTEL_*)."""
        self.exporter = exporter

    @property
    def spans_failed(self) -> int:
        """Spans the exporter could not deliver (collector down): dropped and counted, never raised."""
        return self.exporter.failed if self.exporter is not None else 0

    def will_keep(self, trace_id: int, duration_s: float, failed: bool, span: Any) -> bool:
        """Whether a span's trace is sure to be exported (so an exemplar may point to it)."""
        if self.sampler is None:
            return bool(span.get_span_context().trace_flags.sampled)  # the head sampler decided
        return self.sampler.sure_to_keep(trace_id, duration_s, failed)

    def kept(self, root: Any) -> bool:
        """Whether the trace of an ended local root span was kept (decided when the root ended)."""
        if self.sampler is None:
            return bool(root.get_span_context().trace_flags.sampled)
        return bool(self.sampler.decided(root.get_span_context().trace_id))

    def server_span(self, method: str, path: str, carrier: Mapping[str, str]) -> ServerSpan:
        """Start a request's SERVER span, the child of the ``traceparent`` in ``carrier`` if any."""
        return ServerSpan(self, method, path, carrier)

    def force_flush(self, timeout_s: float = 5.0) -> bool:
        """Export every decided span now (a no-op on a provider inferwatch does not own)."""
        if not self.owned:
            return True
        return bool(self.provider.force_flush(int(timeout_s * 1000)))

    def shutdown(self) -> None:
        """Flush and stop the pipeline inferwatch built (idempotent; leaves an app's provider alone)."""
        if self.owned:
            self.provider.shutdown()

    def __repr__(self) -> str:
        return f"Tracing(service={self.service!r}, owned={self.owned})"


class CountingExporter:
    """Wraps an exporter: counts spans exported and failed; never raises into the batch thread."""

    def __init__(self, inner: SpanExporter) -> None:
        self.inner = inner
        self.exported = self.failed = 0
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        from opentelemetry.sdk.trace.export import SpanExportResult

        try:
            result = self.inner.export(spans)
        except Exception:
            log.warning("inferwatch tracing: exporter raised; %d spans dropped", len(spans), exc_info=True)
            result = SpanExportResult.FAILURE
        with self._lock:
            if result is SpanExportResult.SUCCESS:
                self.exported += len(spans)
            else:
                self.failed += len(spans)
        return result

    def shutdown(self) -> None:
        self.inner.shutdown()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return bool(self.inner.force_flush(timeout_millis))


def setup(service_name: str, endpoint: str | None = None, sample_ratio: float = 0.01,
          slow_threshold_s: float = 1.0, *, exporter: SpanExporter | None = None,
          install_global: bool = True, export_timeout_s: float = 2.0) -> Tracing:
    """Configure tracing for ``service_name``: OTLP/HTTP export of tail-sampled traces.

    ``endpoint`` is the collector's base URL (``http://host:4318``) or the full
    ``.../v1/traces`` URL; ``exporter`` replaces the OTLP exporter (tests, other
    protocols). ``slow_threshold_s`` defaults to the default rule pack's P1 latency
    threshold (``SevereLatency``, P99 > 1 s). With ``install_global`` the provider becomes OpenTelemetry's
    global one, unless the application already set its own: then that one is
    used as it is.
    """
    try:
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError as exc:
        from inferwatch._exceptions import ConfigError

        raise ConfigError(INSTALL_HINT) from exc
    if install_global:
        current = trace.get_tracer_provider()
        if isinstance(current, TracerProvider):
            log.info("inferwatch tracing: using the application's TracerProvider as it is")
            return Tracing(service_name, current.get_tracer(INSTRUMENTATION), current, owned=False)
    provider, sampler, counting = _build(service_name, endpoint, sample_ratio, slow_threshold_s,
                                         exporter, export_timeout_s)
    if install_global:
        trace.set_tracer_provider(provider)
    return Tracing(service_name, provider.get_tracer(INSTRUMENTATION), provider, owned=True,
                   sampler=sampler, exporter=counting)


def _build(service_name: str, endpoint: str | None, sample_ratio: float, slow_threshold_s: float,
           exporter: SpanExporter | None, export_timeout_s: float,
           ) -> tuple[TracerProvider, TailSamplingProcessor | None, CountingExporter]:
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    from inferwatch.sdk._sampling import TailSamplingProcessor

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service_name}
    head_sampled = bool(os.environ.get("OTEL_TRACES_SAMPLER"))
    # With tail sampling every span is recorded (the head must not decide); None reads OTEL_TRACES_SAMPLER.
    provider = TracerProvider(resource=Resource.create(attributes),
                              sampler=None if head_sampled else ALWAYS_ON)
    counting = CountingExporter(exporter or _otlp_exporter(endpoint, export_timeout_s))
    processor: SpanProcessor = BatchSpanProcessor(counting)  # type: ignore[arg-type]
    sampler = None
    if not head_sampled:
        sampler = TailSamplingProcessor(processor, sample_ratio=sample_ratio,
                                        slow_threshold_s=slow_threshold_s)
        processor = sampler
    provider.add_span_processor(processor)
    return provider, sampler, counting


def _otlp_exporter(endpoint: str | None, timeout_s: float) -> SpanExporter:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError as exc:
        from inferwatch._exceptions import ConfigError

        raise ConfigError(INSTALL_HINT.replace("SDK", "OTLP/HTTP exporter")) from exc
    if endpoint is not None and not endpoint.rstrip("/").endswith(TRACES_PATH):
        endpoint = endpoint.rstrip("/") + TRACES_PATH
    timeout = None if os.environ.get("OTEL_EXPORTER_OTLP_TIMEOUT") else timeout_s
    return OTLPSpanExporter(endpoint=endpoint, timeout=timeout)


# The server span of an HTTP request, continued from an incoming W3C ``traceparent``:
# The SDK's middleware asks the monitor's ``Tracing`` for a ``ServerSpan`` when a
# request arrives and ends it with the status and route once the app answered;
# the span is current while the app runs, so stages become its children. The
# propagator is OpenTelemetry's global one (``OTEL_PROPAGATORS``; W3C trace
# context and baggage by default).

class ServerSpan:
    """One request's SERVER span: current from ``__init__`` until ``end``."""

    __slots__ = ("_method", "_span", "_token", "_tracing")

    def __init__(self, tracing: Tracing, method: str, path: str, carrier: Mapping[str, str]) -> None:
        from opentelemetry import context, propagate, trace
        from opentelemetry.trace import SpanKind

        parent = propagate.extract(carrier)
        self._method, self._tracing = method, tracing
        self._span = tracing.tracer.start_span(
            method, context=parent, kind=SpanKind.SERVER,
            attributes={"http.request.method": method, "url.path": path},
        )
        self._token = context.attach(trace.set_span_in_context(self._span, parent))

    def end(self, status: int, route: str) -> str:
        """Name the span ``METHOD route``, record the status (5xx is an error), end it, restore context.

        Returns the trace id (32 hex digits) when the trace is kept, so the
        request's latency observation may point to it as an exemplar; else ``""``.
        """
        from opentelemetry import context
        from opentelemetry.trace import Status, StatusCode

        span = self._span
        span.update_name(f"{self._method} {route}")
        span.set_attribute("http.route", route)
        span.set_attribute("http.response.status_code", status)
        if status >= 500:
            span.set_status(Status(StatusCode.ERROR))
        span.end()
        context.detach(self._token)
        return format(span.get_span_context().trace_id, "032x") if self._tracing.kept(span) else ""
