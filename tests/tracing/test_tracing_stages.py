"""Server spans from ``traceparent``, stage spans as children, stage histograms; to a real OTLP receiver."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from inferwatch.sdk import Monitor
from inferwatch.tracing import Tracing, setup

from .conftest import Receiver

SVC = {"service": "ranker", "model": "ctr", "version": "v3"}
PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
COUNT = "inferwatch_stage_duration_seconds_count"
SERVER, INTERNAL, ERROR = 2, 1, 2  # OTLP enum values: SPAN_KIND_SERVER, SPAN_KIND_INTERNAL, STATUS_CODE_ERROR


def _app(monitor: Monitor) -> Starlette:
    async def predict(req: Request) -> PlainTextResponse:
        with monitor.stage("feature_store"):
            pass
        await score()
        if req.query_params.get("fail"):
            with monitor.stage("postprocess"):
                raise RuntimeError("bad output")
        return PlainTextResponse("ok")

    @monitor.stage("model")
    async def score() -> None:
        await asyncio.sleep(0)

    return Starlette(routes=[Route("/predict", predict)])


@pytest.fixture
def tracing(receiver: Receiver) -> Iterator[Tracing]:
    tr = setup("ranker", endpoint=receiver.url, sample_ratio=1.0, install_global=False)
    yield tr
    tr.shutdown()


def test_server_span_continues_traceparent_and_stages_are_its_children(
        receiver: Receiver, tracing: Tracing) -> None:
    with Monitor(**SVC, tracing=tracing) as m, TestClient(m.asgi(_app(m))) as client:
        r = client.get("/predict", headers={"traceparent": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"})
        assert r.status_code == 200
        assert tracing.force_flush(60)
        assert receiver.wait_for(lambda spans: len(spans) >= 3)
        by_name = {s.name: s for s in receiver.spans}
        assert set(by_name) == {"GET /predict", "feature_store", "model"}
        server = by_name["GET /predict"]
        assert (server.trace_id, server.parent_span_id, server.kind) == (PARENT_TRACE, PARENT_SPAN, SERVER)
        assert server.service == "ranker"
        assert server.attributes["http.response.status_code"] == 200
        for stage in ("feature_store", "model"):
            s = by_name[stage]
            assert (s.trace_id, s.parent_span_id, s.kind) == (PARENT_TRACE, server.span_id, INTERNAL)
            assert server.start_ns <= s.start_ns <= s.end_ns <= server.end_ns
            assert m.get_sample_value(COUNT, {**SVC, "stage": stage}) == 1.0


def test_failed_stage_is_an_error_span_and_counted(receiver: Receiver, tracing: Tracing) -> None:
    with Monitor(**SVC, tracing=tracing) as m, \
            TestClient(m.asgi(_app(m)), raise_server_exceptions=False) as c:
        assert c.get("/predict?fail=1").status_code == 500
        assert tracing.force_flush(60)
        assert receiver.wait_for(lambda spans: len(spans) >= 4)
        by_name = {s.name: s for s in receiver.spans}
        assert by_name["postprocess"].status_code == ERROR
        assert by_name["GET /predict"].status_code == ERROR
        assert len({s.trace_id for s in receiver.spans}) == 1
        assert by_name["GET /predict"].parent_span_id == ""  # no traceparent: a new trace
        assert m.get_sample_value("inferwatch_stage_errors_total", {**SVC, "stage": "postprocess"}) == 1.0
        assert m.get_sample_value("inferwatch_stage_errors_total", {**SVC, "stage": "model"}) == 0.0


def test_stage_without_tracing_records_the_histogram_only() -> None:
    with Monitor(**SVC) as m:
        assert m.tracing is None

        @m.stage("preprocess")
        def prep(x: int) -> int:
            return x + 1

        assert prep(1) == 2
        with pytest.raises(ValueError), m.stage("preprocess"):
            raise ValueError("x")
        assert m.get_sample_value(COUNT, {**SVC, "stage": "preprocess"}) == 2
        assert m.get_sample_value("inferwatch_stage_errors_total", {**SVC, "stage": "preprocess"}) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_collector_down_never_raises_into_the_request_and_drops_are_counted() -> None:
    tr = setup("ranker", endpoint=f"http://127.0.0.1:{_closed_port()}", sample_ratio=1.0,
               install_global=False, export_timeout_s=0.5)
    try:
        with Monitor(**SVC, tracing=tr) as m, TestClient(m.asgi(_app(m))) as client:
            for _ in range(3):
                assert client.get("/predict").status_code == 200
            tr.force_flush(timeout_s=10)
            assert tr.spans_failed == 9
            failed = {"service": "ranker", "outcome": "export_failed"}
            assert m.get_sample_value("inferwatch_trace_spans_total", failed) == 9
            kept = {"service": "ranker", "outcome": "kept"}
            assert m.get_sample_value("inferwatch_trace_spans_total", kept) == 9
            assert tr.exporter is not None and tr.exporter.exported == 0
    finally:
        tr.shutdown()


def test_setup_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="sample_ratio"):
        setup("ranker", sample_ratio=1.5, install_global=False)
    with pytest.raises(ValueError, match="slow_threshold_s"):
        setup("ranker", slow_threshold_s=0, install_global=False)


def test_setup_leaves_the_applications_own_provider_alone() -> None:
    code = textwrap.dedent("""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        app = TracerProvider()
        trace.set_tracer_provider(app)
        from inferwatch.tracing import setup
        tr = setup("svc")
        assert tr.provider is app and not tr.owned and tr.sampler is None, tr
        assert trace.get_tracer_provider() is app
        print("ok")
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_monitor_tracing_true_honours_otel_variables(receiver: Receiver) -> None:
    # A fresh process: the global provider is set once per process.
    code = textwrap.dedent("""
        from opentelemetry import trace
        from inferwatch.sdk import Monitor
        m = Monitor(service="ranker", tracing=True)
        assert trace.get_tracer_provider() is m.tracing.provider
        try:  # a failed request: kept by the tail sampler whatever the ratio
            with m.tracing.tracer.start_as_current_span("request"), m.stage("model"):
                raise RuntimeError("boom")
        except RuntimeError:
            pass
        m.close()
    """)
    env = {**os.environ, "OTEL_SERVICE_NAME": "renamed", "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert receiver.wait_for(lambda spans: len(spans) == 2)
    assert {(s.service, s.name) for s in receiver.spans} == {("renamed", "request"), ("renamed", "model")}


def test_wsgi_server_span_continues_traceparent(receiver: Receiver, tracing: Tracing) -> None:
    from wsgiref.util import setup_testing_defaults

    with Monitor(**SVC, tracing=tracing) as m:
        def wsgi_app(environ: dict[str, object], start_response: Callable[..., object]) -> list[bytes]:
            with m.stage("model"):
                start_response("503 Service Unavailable", [("Content-Type", "text/plain")])
            return [b"busy"]

        environ: dict[str, object] = {"PATH_INFO": "/predict",
                                      "HTTP_TRACEPARENT": f"00-{PARENT_TRACE}-{PARENT_SPAN}-01"}
        setup_testing_defaults(environ)
        body = m.wsgi(wsgi_app)(environ, lambda status, headers, exc_info=None: None)
        assert b"".join(body) == b"busy"
        body.close()  # type: ignore[attr-defined]  # PEP 3333: the server closes the iterable
        assert tracing.force_flush(60)
        assert receiver.wait_for(lambda spans: len(spans) == 2)
    by_name = {s.name: s for s in receiver.spans}
    server = by_name["GET /predict"]
    assert (server.trace_id, server.parent_span_id, server.status_code) == (PARENT_TRACE, PARENT_SPAN, ERROR)
    assert by_name["model"].parent_span_id == server.span_id


def test_stage_exemplars_point_only_to_traces_that_are_exported(receiver: Receiver) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    tr = setup("ranker", endpoint=receiver.url, sample_ratio=0.0, install_global=False)
    try:
        with Monitor(**SVC, tracing=tr) as m:
            for fail in (False, True):  # ratio 0: the fast, successful trace is dropped; the failed one kept
                with tr.tracer.start_as_current_span("request"):
                    try:
                        with m.stage("model"):
                            if fail:
                                raise RuntimeError("x")
                    except RuntimeError:
                        pass
            assert tr.force_flush(60)
            assert receiver.wait_for(lambda spans: len(spans) == 2)
            families = text_string_to_metric_families(m.metrics_text(openmetrics=True))
            hist = next(f for f in families if f.name == "inferwatch_stage_duration_seconds")
            exemplars = {s.exemplar.labels["trace_id"] for s in hist.samples if s.exemplar is not None}
    finally:
        tr.shutdown()
    assert exemplars == {receiver.spans[0].trace_id}  # the kept trace, never the dropped one


def test_stages_without_tracing_never_import_opentelemetry() -> None:
    # Instrumented code runs unchanged without the extra: nothing below imports OpenTelemetry.
    code = textwrap.dedent("""
        import sys
        import inferwatch.tracing
        import inferwatch.server.api._otlp_traces
        from inferwatch.sdk import Monitor
        with Monitor(service="svc") as m, m.stage("model"):
            pass
        loaded = sorted(name for name in sys.modules if name.startswith("opentelemetry"))
        print(loaded)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("traceparent", [
    "garbage",  # not the W3C format
    f"00-{'0' * 32}-{PARENT_SPAN}-01",  # an all-zero trace id is invalid
    f"ff-{PARENT_TRACE}-{PARENT_SPAN}-01",  # version ff is forbidden
])
def test_invalid_traceparent_starts_a_new_trace(
        receiver: Receiver, tracing: Tracing, traceparent: str) -> None:
    with Monitor(**SVC, tracing=tracing) as m, TestClient(m.asgi(_app(m))) as client:
        assert client.get("/predict", headers={"traceparent": traceparent}).status_code == 200
        assert tracing.force_flush(60)
        assert receiver.wait_for(lambda spans: len(spans) == 3)
    server = next(s for s in receiver.spans if s.name == "GET /predict")
    assert server.parent_span_id == "" and server.trace_id not in (PARENT_TRACE, "0" * 32)
