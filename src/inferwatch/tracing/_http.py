"""The server span of an HTTP request, continued from an incoming W3C ``traceparent``.

The SDK's middleware asks the monitor's ``Tracing`` for a ``ServerSpan`` when a
request arrives and ends it with the status and route once the app answered;
the span is current while the app runs, so stages become its children. The
propagator is OpenTelemetry's global one (``OTEL_PROPAGATORS``; W3C trace
context and baggage by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from inferwatch.tracing._setup import Tracing

__all__ = ["ServerSpan"]


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
