"""One trace across a real HTTP hop: service A calls B (uvicorn on loopback) through an instrumented httpx."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from inferwatch.sdk import Monitor
from inferwatch.tracing import setup

from .conftest import Receiver


@pytest.fixture
def feature_store(receiver: Receiver) -> Iterator[str]:
    """Service B, a real uvicorn server on loopback with its own monitor and tracing."""
    tr = setup("feature-store", endpoint=receiver.url, sample_ratio=1.0, install_global=False)
    monitor = Monitor(service="feature-store", tracing=tr)

    async def lookup(_: Request) -> PlainTextResponse:
        with monitor.stage("sqlite"):
            return PlainTextResponse("features")

    app = monitor.asgi(Starlette(routes=[Route("/features", lookup)]))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)  # connections queue in the backlog until uvicorn accepts: no wait for start
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    th = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    server.should_exit = True
    th.join(10)
    sock.close()
    monitor.close()
    tr.shutdown()


def test_one_trace_crosses_the_http_hop(receiver: Receiver, feature_store: str) -> None:
    tr = setup("ranker", endpoint=receiver.url, sample_ratio=1.0, install_global=False)
    monitor = Monitor(service="ranker", tracing=tr)
    with httpx.Client() as sync:  # idempotent, and sync clients take a sync hook
        assert monitor.instrument_httpx(monitor.instrument_httpx(sync)) is sync
        assert len(sync.event_hooks["request"]) == 1

    async def predict(_: Request) -> PlainTextResponse:
        async with monitor.instrument_httpx(httpx.AsyncClient(base_url=feature_store, timeout=10)) as client:
            with monitor.stage("feature_store"):
                r = await client.get("/features")
        return PlainTextResponse(r.text)

    try:
        with TestClient(monitor.asgi(Starlette(routes=[Route("/predict", predict)]))) as c:
            assert c.get("/predict").text == "features"
        assert tr.force_flush(60)
        assert receiver.wait_for(lambda spans: len(spans) == 4)
    finally:
        monitor.close()
        tr.shutdown()
    spans = {(s.service, s.name): s for s in receiver.spans}
    a_root, a_stage = spans["ranker", "GET /predict"], spans["ranker", "feature_store"]
    b_root, b_stage = spans["feature-store", "GET /features"], spans["feature-store", "sqlite"]
    assert len({s.trace_id for s in receiver.spans}) == 1
    assert a_stage.parent_span_id == a_root.span_id
    assert b_root.parent_span_id == a_stage.span_id  # continued from the traceparent httpx sent
    assert b_stage.parent_span_id == b_root.span_id
