"""Tracing: per-request cost and export volume, inferwatch tail sampling against the plain OpenTelemetry SDK.

Each request is a SERVER span with 4 stage children; 1 % of requests fail.
Side by side in one process, each exporting to an exporter that OTLP-encodes
the spans and counts the bytes (no network):

- ``otel``: the OpenTelemetry SDK's defaults, ParentBased(AlwaysOn) and a BatchSpanProcessor;
- ``otel-head-1%``: head sampling at 1 % (ParentBased(TraceIdRatioBased(0.01)));
- ``inferwatch``: ``monitor.stage`` spans (plus the stage histogram) with tail sampling at 1 %.

Printed: microseconds per request, export bytes per 1,000 requests, and the
share of failed requests whose trace was exported; then, paced at 1,000
requests per second (``PACED`` requests, bounded), the P50 and P99 time a
request spends in the pipeline's code and the P99 it adds over the same
request without tracing (``none``), while the pipeline exports behind it.

Usage: ``bench_tracing.py [N] [PACED]`` (defaults 20,000 and 5,000).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext

import numpy as np
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, TraceIdRatioBased
from opentelemetry.trace import SpanKind, Status, StatusCode

import _results
from inferwatch.sdk import Monitor
from inferwatch.tracing import setup

N = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
PACED = int(sys.argv[2]) if len(sys.argv) > 2 else 5_000
RATE = 1000.0
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


def _paced(request: Callable[[bool], None]) -> tuple[float, float]:
    """P50 and P99 seconds per request at RATE requests per second (sleeping between slots)."""
    took = np.empty(PACED)
    due = time.perf_counter()
    for i in range(PACED):
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        due = max(due + 1.0 / RATE, time.perf_counter() - 1.0 / RATE)  # late: no burst to catch up
        t0 = time.perf_counter()
        request(i % 100 == 7)
        took[i] = time.perf_counter() - t0
    p50, p99 = np.percentile(took, [50, 99])
    return float(p50), float(p99)


def none() -> tuple[float, float]:
    """The same request without tracing: the baseline the paced figures are compared to."""
    def request(fail: bool) -> None:
        for _stage in STAGES:
            with nullcontext():
                pass

    p50, p99 = _paced(request)
    print(f"{'none':14s} at {RATE:.0f} req/s: p50 {p50 * 1e6:6.1f} us  p99 {p99 * 1e6:6.1f} us", flush=True)
    return p50, p99


def _report_paced(name: str, request: Callable[[bool], None], base_p99: float) -> float:
    p50, p99 = _paced(request)
    print(f"{name:14s} at {RATE:.0f} req/s: p50 {p50 * 1e6:6.1f} us  p99 {p99 * 1e6:6.1f} us  "
          f"(p99 added {(p99 - base_p99) * 1e6:+.1f} us)", flush=True)
    return p99 - base_p99


EXPORTED: dict[str, tuple[float, int, int]] = {}
"""Per run: KiB exported per 1,000 requests, failed traces exported, failed requests."""


def _run(name: str, request: Callable[[bool], None], flush: Callable[[], object],
         exporter: BytesExporter) -> float:
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
    EXPORTED[name] = (exporter.bytes / N * 1000 / 1024, exporter.failed_roots, failures)
    return dt / N


def otel(sampler: object, name: str, base_p99: float) -> tuple[float, float]:
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

    cost = _run(name, request, provider.force_flush, exporter)
    added = _report_paced(name, request, base_p99)
    provider.shutdown()
    return cost, added


def inferwatch(base_p99: float) -> tuple[float, float]:
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

    cost = _run("inferwatch", request, tr.force_flush, exporter)
    added = _report_paced("inferwatch", request, base_p99)
    monitor.close()
    tr.shutdown()
    return cost, added


if __name__ == "__main__":
    print(f"{N} requests, 4 stage spans each, 1 % failed; tail/head sampling at 1 %; "
          f"then {PACED} paced at {RATE:.0f} req/s")
    _, base = none()
    otel_cost, otel_added = otel(ParentBased(ALWAYS_ON), "otel", base)
    otel(ParentBased(TraceIdRatioBased(0.01)), "otel-head-1%", base)
    iw_cost, iw_added = inferwatch(base)
    print(f"inferwatch / otel: per-request cost {iw_cost / otel_cost:.2f}x; p99 added at {RATE:.0f} req/s "
          f"{iw_added * 1e6:+.1f} us vs {otel_added * 1e6:+.1f} us")
    area = "Tracing"
    _results.record(area, "Cost per request (a SERVER span and 4 stage spans, tail sampling at 1 %)",
                    f"{iw_cost * 1e6:.1f} µs", f"OpenTelemetry SDK defaults: {otel_cost * 1e6:.1f} µs",
                    f"{iw_cost / otel_cost:.2f}")
    (iw_kib, iw_failed, failed), (otel_kib, _, _) = EXPORTED["inferwatch"], EXPORTED["otel"]
    _results.record(area, "Export bytes per 1,000 requests", f"{iw_kib:.1f} KiB",
                    f"OpenTelemetry SDK defaults: {otel_kib:.1f} KiB", f"{iw_kib / otel_kib:.3f}")
    _results.record(area, f"Failed traces exported (of {failed})", f"{iw_failed}",
                    f"OpenTelemetry head sampling at 1 %: {EXPORTED['otel-head-1%'][1]}", None)
