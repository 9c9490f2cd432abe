"""Streaming LLM endpoints under the ASGI middleware, on simulated time.

A Starlette endpoint yields tokens with known delays (the simulated clock
advances inside the generator), so the truth is known to the nanosecond:
prefill PREFILL_S, then TOKENS tokens GAP_S apart.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
import uvicorn
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from inferwatch.model import SimulatedClock
from inferwatch.sdk import Monitor
from inferwatch.tracing import setup

PREFILL_S, GAP_S, TOKENS = 0.180, 0.025, 12
TRUE_TTFT = PREFILL_S
TRUE_TPOT = GAP_S
SVC = {"service": "chat", "version": "v1"}
TTFT = "inferwatch_generation_time_to_first_token_seconds"
TPOT = "inferwatch_generation_time_per_output_token_seconds"


def chat_app(monitor: Monitor, clock: SimulatedClock) -> Starlette:
    """Four streaming routes: tracked by the app, SSE untracked, marked generative, plain download."""

    async def tokens(track: bool) -> AsyncIterator[bytes]:
        clock.advance(PREFILL_S)
        if not track:
            for i in range(TOKENS):
                if i:
                    clock.advance(GAP_S)
                yield f"data: tok{i}\n\n".encode()
                await asyncio.sleep(0)
            return
        with monitor.track_generation(route="/v1/chat/completions", model="llama-3-8b", input_tokens=17) as g:
            for i in range(TOKENS):
                if i:
                    clock.advance(GAP_S)
                g.tokens(1)
                yield f"data: tok{i}\n\n".encode()
                await asyncio.sleep(0)

    async def tracked(_: Request) -> StreamingResponse:
        return StreamingResponse(tokens(True), media_type="text/event-stream")

    async def sse(_: Request) -> StreamingResponse:
        return StreamingResponse(tokens(False), media_type="text/event-stream")

    async def plain(_: Request) -> StreamingResponse:
        return StreamingResponse(tokens(False), media_type="text/plain")

    return Starlette(routes=[
        Route("/v1/chat/completions", tracked, methods=["POST"]),
        Route("/v1/completions", sse, methods=["POST"]),
        Route("/generate", plain, methods=["POST"]),
        Route("/download", plain, methods=["POST"]),
    ])


def labels(route: str, model: str) -> dict[str, str]:
    return {**SVC, "route": route, "model": model}


def assert_truth(monitor: Monitor, route: str, model: str) -> None:
    want = labels(route, model)
    assert monitor.get_sample_value(TTFT + "_count", want) == 1
    assert monitor.get_sample_value(TTFT + "_sum", want) == pytest.approx(TRUE_TTFT, abs=1e-3)
    assert monitor.get_sample_value(TPOT + "_count", want) == 1
    assert monitor.get_sample_value(TPOT + "_sum", want) == pytest.approx(TRUE_TPOT, abs=1e-3)
    assert monitor.get_sample_value("inferwatch_generation_output_tokens_total", want) == TOKENS


def test_app_tracked_stream_is_measured_from_arrival_and_recorded_once() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", "default-model", "v1", clock=clock) as m:
        client = TestClient(m.asgi(chat_app(m, clock)))
        r = client.post("/v1/chat/completions")
        assert r.status_code == 200 and r.text.count("data: ") == TOKENS
        assert_truth(m, "/v1/chat/completions", "llama-3-8b")
        want = labels("/v1/chat/completions", "llama-3-8b")
        assert m.get_sample_value("inferwatch_generation_input_tokens_total", want) == 17
        # the app said so: the middleware records no generation of its own for this request
        assert m.get_sample_value(TTFT + "_count", labels("/v1/chat/completions", "default-model")) is None
        text = m.metrics_text()
    families = {f.name for f in text_string_to_metric_families(text)}
    assert {TTFT, TPOT, "inferwatch_generation_duration_seconds"} <= families


def test_untracked_event_stream_first_chunk_is_the_first_token() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", "llama-3-8b", "v1", clock=clock) as m:
        r = TestClient(m.asgi(chat_app(m, clock))).post("/v1/completions")
        assert r.status_code == 200
        assert_truth(m, "/v1/completions", "llama-3-8b")  # one SSE chunk = one token
        assert m.get_sample_value("inferwatch_generation_input_tokens_total",
                                  labels("/v1/completions", "llama-3-8b")) == 0


def test_only_event_streams_and_marked_routes_are_generations() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("chat", "llama-3-8b", "v1", clock=clock) as m:
        client = TestClient(m.asgi(chat_app(m, clock), generative=["/generate"]))
        assert client.post("/generate").status_code == 200
        assert client.post("/download").status_code == 200
        assert_truth(m, "/generate", "llama-3-8b")
        assert m.get_sample_value(TTFT + "_count", labels("/download", "llama-3-8b")) is None
        assert m.get_sample_value("inferwatch_requests_total", {
            **SVC, "model": "llama-3-8b", "route": "/download", "code": "200"}) == 1


@pytest.fixture
def served() -> Iterator[tuple[str, Monitor, threading.Event]]:
    """The chat app behind a real uvicorn on loopback; the event is set once the middleware has recorded."""
    clock = SimulatedClock(0.0)
    monitor = Monitor("chat", "llama-3-8b", "v1", clock=clock)
    inner = monitor.asgi(chat_app(monitor, clock))
    recorded = threading.Event()

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await inner(scope, receive, send)
        if scope["type"] == "http":
            recorded.set()  # after the middleware's finally: the request is on the monitor's queue

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    th = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}", monitor, recorded
    server.should_exit = True
    th.join(10)
    sock.close()
    monitor.close()


def test_real_uvicorn_stream_read_chunk_by_chunk(served: tuple[str, Monitor, threading.Event]) -> None:
    url, monitor, recorded = served
    chunks = []
    with httpx.Client(timeout=10) as client, client.stream("POST", url + "/v1/completions") as r:
        assert r.headers["content-type"].startswith("text/event-stream")
        chunks = [line for line in r.iter_lines() if line.startswith("data: ")]
    assert len(chunks) == TOKENS
    assert recorded.wait(60)
    assert_truth(monitor, "/v1/completions", "llama-3-8b")


def test_request_span_gets_genai_attributes() -> None:
    exporter = InMemorySpanExporter()
    tracing = setup("chat", sample_ratio=1.0, exporter=exporter, install_global=False)
    clock = SimulatedClock(0.0)
    try:
        with Monitor("chat", "default-model", "v1", clock=clock, tracing=tracing) as m:
            assert TestClient(m.asgi(chat_app(m, clock))).post("/v1/chat/completions").status_code == 200
            assert tracing.force_flush(60)
    finally:
        tracing.shutdown()
    (span,) = [s for s in exporter.get_finished_spans() if s.name == "POST /v1/chat/completions"]
    attrs = dict(span.attributes or {})
    assert attrs["gen_ai.request.model"] == "llama-3-8b"
    assert attrs["gen_ai.usage.input_tokens"] == 17
    assert attrs["gen_ai.usage.output_tokens"] == TOKENS
    assert attrs["gen_ai.server.time_to_first_token"] == pytest.approx(TRUE_TTFT, abs=1e-3)
    assert attrs["gen_ai.server.time_per_output_token"] == pytest.approx(TRUE_TPOT, abs=1e-3)


REQ = {**SVC, "model": "default-model"}


def test_a_generation_is_counted_but_kept_out_of_the_request_latency_histogram() -> None:
    # the stream lasts PREFILL + 11 gaps (0.455 s); in the request histogram it would page
    # HighP99Latency on healthy traffic, so only its count (QPS, error ratio) goes there
    clock = SimulatedClock(0.0)
    with Monitor("chat", "default-model", "v1", clock=clock) as m:
        client = TestClient(m.asgi(chat_app(m, clock)))
        for path in ("/v1/chat/completions", "/v1/completions", "/download"):
            assert client.post(path).status_code == 200
        count, total = "inferwatch_request_duration_seconds_count", "inferwatch_requests_total"
        for route in ("/v1/chat/completions", "/v1/completions"):
            assert m.get_sample_value(total, {**REQ, "route": route, "code": "200"}) == 1
            assert m.get_sample_value(count, {**REQ, "route": route}) is None
        # a chunked download is no generation: its duration is its latency
        assert m.get_sample_value(count, {**REQ, "route": "/download"}) == 1


def test_generation_histograms_carry_the_trace_id_as_exemplar() -> None:
    exporter = InMemorySpanExporter()
    tracing = setup("chat", sample_ratio=1.0, exporter=exporter, install_global=False)
    clock = SimulatedClock(0.0)
    try:
        with Monitor("chat", "default-model", "v1", clock=clock, tracing=tracing) as m:
            client = TestClient(m.asgi(chat_app(m, clock)))
            assert client.post("/v1/chat/completions").status_code == 200
            assert client.post("/v1/completions").status_code == 200
            assert tracing.force_flush(60)
            text = m.metrics_text(openmetrics=True)
    finally:
        tracing.shutdown()
    spans = {s.name: format(s.context.trace_id, "032x") for s in exporter.get_finished_spans()}
    for route, model in (("/v1/chat/completions", "llama-3-8b"), ("/v1/completions", "default-model")):
        trace_id = spans[f"POST {route}"]
        for family in (TTFT, TPOT, "inferwatch_generation_duration_seconds"):
            lines = [ln for ln in text.splitlines() if ln.startswith(family + "_bucket")
                     and f'route="{route}"' in ln and f'model="{model}"' in ln and "# {" in ln]
            assert len(lines) == 1, (family, route)
            assert f'trace_id="{trace_id}"' in lines[0]
    # the request histogram has no exemplar for a generation (its latency is not there)
    assert not [ln for ln in text.splitlines() if ln.startswith("inferwatch_request_duration_seconds_bucket")
                and "# {" in ln]


def test_a_wsgi_generation_streamed_from_the_body_stays_out_of_the_request_histogram() -> None:
    from collections.abc import Callable, Iterable
    from wsgiref.util import setup_testing_defaults

    clock = SimulatedClock(0.0)
    with Monitor("chat", "default-model", "v1", clock=clock) as m:
        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            start_response("200 OK", [("content-type", "text/event-stream")])
            if environ["PATH_INFO"] == "/download":
                return [b"x" * 10]

            def stream() -> Iterable[bytes]:  # runs while the server iterates the body
                clock.advance(PREFILL_S)
                with m.track_generation(route="/v1/chat/completions", model="llama-3-8b") as g:
                    for i in range(TOKENS):
                        if i:
                            clock.advance(GAP_S)
                        g.tokens(1)
                        yield f"data: tok{i}\n\n".encode()
            return stream()

        wsgi = m.wsgi(app)
        for path in ("/v1/chat/completions", "/download"):
            environ: dict[str, Any] = {"PATH_INFO": path}
            setup_testing_defaults(environ)
            body = wsgi(environ, lambda *a: None)
            assert b"".join(body)
            body.close()  # type: ignore[attr-defined]
        assert_truth(m, "/v1/chat/completions", "llama-3-8b")  # timed from the request's arrival
        count = "inferwatch_request_duration_seconds_count"
        assert m.get_sample_value("inferwatch_requests_total",
                                  {**REQ, "route": "/v1/chat/completions", "code": "200"}) == 1
        assert m.get_sample_value(count, {**REQ, "route": "/v1/chat/completions"}) is None
        assert m.get_sample_value(count, {**REQ, "route": "/download"}) == 1
