"""Tail sampling: every slow or failed trace reaches the receiver whole; the rest at the configured rate."""

from __future__ import annotations

import math
import random

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, Status, StatusCode

from inferwatch.tracing import TailSamplingProcessor, keeps_by_ratio, setup

from .conftest import Receiver

RATIO = 0.1
N_TRACES = 600
SLOW_S = 1.0


def _trace(tracer: object, kind: str, t0: int) -> None:
    """One request: a SERVER root and two stage children, with explicit times (no sleeping)."""
    duration_ns = int((2.0 if kind == "slow" else 0.01) * 1e9)
    root = tracer.start_span("GET /predict", kind=SpanKind.SERVER, start_time=t0)  # type: ignore[attr-defined]
    from opentelemetry import trace

    ctx = trace.set_span_in_context(root)
    for i, stage in enumerate(("feature_store", "model")):
        child = tracer.start_span(stage, context=ctx, start_time=t0 + i)  # type: ignore[attr-defined]
        if kind == "error" and stage == "model":
            child.set_status(Status(StatusCode.ERROR))  # only a child failed: the trace is still kept
        child.end(end_time=t0 + duration_ns - 1)
    root.end(end_time=t0 + duration_ns)


def test_slow_and_failed_traces_all_kept_rest_within_binomial_bounds(receiver: Receiver) -> None:
    tr = setup("ranker", endpoint=receiver.url, sample_ratio=RATIO, slow_threshold_s=SLOW_S,
               install_global=False)
    rng = random.Random(17)
    kinds = [rng.choice(["slow", "error", "fast", "fast", "fast", "fast"]) for _ in range(N_TRACES)]
    try:
        for i, kind in enumerate(kinds):
            _trace(tr.tracer, kind, 1_700_000_000_000_000_000 + i * 10**9)
        assert tr.force_flush(timeout_s=30)
        sampler = tr.sampler
        assert sampler is not None
        assert receiver.wait_for(lambda spans: len(spans) == sampler.counts.spans_exported)
    finally:
        tr.shutdown()
    traces = receiver.traces()
    assert all(len(spans) == 3 for spans in traces.values())  # whole traces, never parts
    by_kind: dict[str, int] = {}
    for spans in traces.values():
        root = next(s for s in spans if s.parent_span_id == "")
        kind = ("slow" if root.duration_s >= SLOW_S else
                "error" if any(s.status_code == 2 for s in spans) else "fast")
        by_kind[kind] = by_kind.get(kind, 0) + 1
    assert by_kind["slow"] == kinds.count("slow")  # 100 %
    assert by_kind["error"] == kinds.count("error")  # 100 %
    n_fast = kinds.count("fast")
    sd = math.sqrt(n_fast * RATIO * (1 - RATIO))
    assert abs(by_kind.get("fast", 0) - n_fast * RATIO) < 4 * sd, (by_kind, n_fast)
    assert sampler.counts.traces_sampled_out == n_fast - by_kind.get("fast", 0)
    assert sampler.counts.spans_sampled_out == 3 * sampler.counts.traces_sampled_out


def _pipeline(ratio: float) -> tuple[TracerProvider, InMemorySpanExporter, TailSamplingProcessor]:
    exporter = InMemorySpanExporter()
    sampler = TailSamplingProcessor(SimpleSpanProcessor(exporter), sample_ratio=ratio,
                                    slow_threshold_s=SLOW_S)
    provider = TracerProvider()
    provider.add_span_processor(sampler)
    return provider, exporter, sampler


def test_late_child_follows_its_roots_decision_and_remote_parent_makes_a_local_root() -> None:
    from opentelemetry import trace

    provider, exporter, sampler = _pipeline(0.0)
    tracer = provider.get_tracer("t")
    root = tracer.start_span("root", start_time=0)
    late = tracer.start_span("late", context=trace.set_span_in_context(root), start_time=1)
    root.set_status(Status(StatusCode.ERROR))
    root.end(end_time=2)
    late.end(end_time=3)  # ended after the root: exported because the trace was kept
    assert [s.name for s in exporter.get_finished_spans()] == ["root", "late"]
    fast = tracer.start_span("fast", start_time=0)
    fast.end(end_time=1)
    assert [s.name for s in exporter.get_finished_spans()] == ["root", "late"]
    assert sampler.counts.traces_kept["error"] == 1 and sampler.counts.traces_sampled_out == 1


@pytest.mark.parametrize(("trace_id", "ratio", "kept"), [
    (0, 0.0, False),  # ratio 0 keeps nothing on the ratio rule
    ((1 << 64) - 1, 1.0, True),  # ratio 1 keeps everything
    (5 << 64, 0.5, True),  # only the low 64 bits count, as TraceIdRatioBased
    ((1 << 63) + 5, 0.5, False),
])
def test_keeps_by_ratio(trace_id: int, ratio: float, kept: bool) -> None:
    assert keeps_by_ratio(trace_id, ratio) is kept
