"""Tracing: per-request cost and export volume, inferwatch tail sampling against the plain OpenTelemetry SDK.

Each request is a SERVER span with 4 stage children; 1 % of requests fail.
Side by side in one process, each exporting to an exporter that OTLP-encodes
the spans and counts the bytes (no network):

- ``otel``: the OpenTelemetry SDK's defaults, ParentBased(AlwaysOn) and a BatchSpanProcessor;
- ``otel-head-1%``: head sampling at 1 % (ParentBased(TraceIdRatioBased(0.01)));
- ``inferwatch``: ``monitor.stage`` spans (plus the stage histogram) with tail sampling at 1 %.

Printed: microseconds per request, export bytes per 1,000 requests, and the
share of failed requests whose trace was exported.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, TraceIdRatioBased
from opentelemetry.trace import SpanKind, Status, StatusCode

from inferwatch.sdk import Monitor
from inferwatch.tracing import setup

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
STAGES = ("preprocess", "feature_store", "model", "postprocess")


class BytesExporter(SpanExporter):
    """OTLP-encodes each batch and counts bytes and failed root spans exported."""

    def __init__(self) -> None:
        self.bytes = self.spans = self.failed_roots = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.bytes += len(encode_spans(spans).SerializeToString())
        self.spans += len(spans)
        self.failed_roots += sum(1 for s in spans if s.parent is None and not s.status.is_ok)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def _run(name: str, request: Callable[[bool], None], flush: Callable[[], object],
         exporter: BytesExporter) -> None:
    failures = 0
    t0 = time.perf_counter()
    for i in range(N):
        fail = i % 100 == 7
        failures += fail
        request(fail)
    flush()
    dt = time.perf_counter() - t0
    print(f"{name:14s} {dt / N * 1e6:8.1f} us/request  {exporter.bytes / N * 1000 / 1024:9.1f} KiB/1000 req  "
          f"failed traces exported {exporter.failed_roots}/{failures}", flush=True)


def otel(sampler: object, name: str) -> None:
    exporter = BytesExporter()
    provider = TracerProvider(sampler=sampler)  # type: ignore[arg-type]
    provider.add_span_processor(BatchSpanProcessor(exporter))
    tracer = provider.get_tracer("bench")

    def request(fail: bool) -> None:
        with tracer.start_as_current_span("POST /predict", kind=SpanKind.SERVER) as root:
            for stage in STAGES:
                with tracer.start_as_current_span(stage):
                    pass
            if fail:
                root.set_status(Status(StatusCode.ERROR))

    _run(name, request, provider.force_flush, exporter)
    provider.shutdown()


def inferwatch() -> None:
    exporter = BytesExporter()
    tr = setup("bench", sample_ratio=0.01, slow_threshold_s=1.0, exporter=exporter, install_global=False)
    monitor = Monitor(service="bench", model="m", version="v1", tracing=tr)

    def request(fail: bool) -> None:
        with tr.tracer.start_as_current_span("POST /predict", kind=SpanKind.SERVER) as root:
            for stage in STAGES:
                with monitor.stage(stage):
                    pass
            if fail:
                root.set_status(Status(StatusCode.ERROR))

    _run("inferwatch", request, tr.force_flush, exporter)
    monitor.close()
    tr.shutdown()


if __name__ == "__main__":
    print(f"{N} requests, 4 stage spans each, 1 % failed; tail/head sampling at 1 %")
    otel(ParentBased(ALWAYS_ON), "otel")
    otel(ParentBased(TraceIdRatioBased(0.01)), "otel-head-1%")
    inferwatch()
