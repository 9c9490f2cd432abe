"""The demo's traces: client -> model service -> feature store (over HTTP) -> model -> postprocess reach the
server's OTLP endpoint, and ``diagnose latency`` names the stage the latency phase slowed."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Iterable, Iterator

import pytest
from starlette.applications import Starlette

from inferwatch.cli import main
from inferwatch.demo import (
    DemoComponents,
    DemoContext,
    DemoOptions,
    Faults,
    Phase,
    ServerThread,
    Story,
    run_demo,
)
from inferwatch.model import SystemClock
from inferwatch.server.api._otlp_traces import trace_routes
from inferwatch.tracing._store import SpanRecord, TraceStore

# 2 phases of 30 story seconds at x20: 1.5 real seconds each. The latency phase slows the model stage by
# 0.96-1.44 s (the demo's own story's 1,200 ms): far past the stall a loaded runner can put into another
# stage's P99 over a 1.5 s window (a normal phase's whole-request P99 reached 0.82 s at load 9)
STORY = Story.of([Phase("normal", 0.0), Phase("latency", 30.0, Faults(latency_ms=1200.0))], end_s=60.0)
SERVER, CLIENT = 2, 3  # OTLP span kinds


class PhaseClock:
    """A DemoPart noting the real time the latency phase started and the last refresh."""

    def __init__(self) -> None:
        self.latency_at: float | None = None
        self.last = 0.0

    def start(self, ctx: DemoContext) -> None:
        pass

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        now = time.time()
        if self.latency_at is None and story_t >= 30.0:
            self.latency_at = now - (story_t - 30.0) / ctx.clock.speed
        self.last = now
        return ()

    def stop(self, ctx: DemoContext) -> None:
        pass


@pytest.fixture
def traces() -> Iterator[tuple[TraceStore, str]]:
    store = TraceStore(":memory:", clock=SystemClock())
    http = ServerThread(Starlette(routes=trace_routes(store))).start()
    yield store, http.url
    http.stop()
    store.close()


def _chains(store: TraceStore) -> list[list[SpanRecord]]:
    """The stored traces that have every hop, each as its spans."""
    out = []
    for summary in store.traces(limit=10_000):
        spans = store.trace(summary.trace_id)
        if {s.service for s in spans} == {"demo-client", "demo", "feature-store"}:
            out.append(spans)
    return out


def test_demo_traces_cross_the_feature_store_hop_and_diagnose_names_the_slowed_stage(
        traces: tuple[TraceStore, str], capsys: pytest.CaptureFixture[str]) -> None:
    store, url = traces
    clock = PhaseClock()
    opts = DemoOptions(duration_s=3.0, speed=20.0, rate=40.0, threads=8, refresh_s=0.25, story=STORY,
                       traces_url=url, trace_ratio=1.0)
    report = run_demo(opts, DemoComponents(parts=[clock]), out=io.StringIO(), tty=False)
    assert [p.name for p in report.phases] == ["normal", "latency"] and clock.latency_at is not None
    chains = _chains(store)
    assert len(chains) > 10, store.count()
    spans = chains[0]
    by = {(s.service, s.name): s for s in spans}
    client, service = by[("demo-client", "POST /predict")], by[("demo", "POST /predict")]
    lookup, remote = by[("demo", "feature_store")], by[("feature-store", "POST /features")]
    assert (client.parent_span_id, client.kind, service.kind) == ("", CLIENT, SERVER)
    # client -> service -> feature_store stage -> the feature store's server span (over HTTP, traceparent)
    assert service.parent_span_id == client.span_id and lookup.parent_span_id == service.span_id
    assert remote.parent_span_id == lookup.span_id
    # model and postprocess are the service's stages, in that order after the lookup
    model, post = by[("demo", "model")], by[("demo", "postprocess")]
    assert model.parent_span_id == post.parent_span_id == service.span_id
    assert lookup.end_ns <= model.start_ns and model.end_ns <= post.start_ns
    # the ONNX Runtime run inside the model stage (preprocess -> session.run -> postprocess)
    run = by[("demo", "onnxruntime.run")]
    assert run.parent_span_id == model.span_id
    assert model.start_ns <= run.start_ns <= run.end_ns <= model.end_ns
    # diagnose latency over the latency phase against the normal one before it names the model stage
    normal_ms = round((clock.latency_at - (clock.last - 3.0)) * 1000)
    latency_ms = round((clock.last - clock.latency_at) * 1000) + 1500  # the last requests end after it
    assert main(["diagnose", "latency", "--service", "demo", "--url", url, "--at", str(clock.latency_at +
                 latency_ms / 1000), "--window", f"{latency_ms}ms", "--baseline", f"{max(normal_ms, 500)}ms",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["slowed_stage"] == "model", out
    model_shift = out["stages"][0]
    assert model_shift["p99_after_s"] >= 0.2 and model_shift["example_traces"], out
    # the model stage's ONNX Runtime run is a span of its own (the demo serves an ONNX model)
    stages = {s["stage"] for s in out["stages"]} - {"onnxruntime.run"}
    assert stages == {"feature_store", "model", "postprocess"}
