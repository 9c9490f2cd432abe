"""An instrumented ONNX Runtime session's run is a span under the request: server → preprocess →
onnxruntime.run (under the model stage) → postprocess, to a real OTLP receiver."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient
from tests._onnx import session

from inferwatch.sdk import Monitor
from inferwatch.tracing import Tracing, setup

from .conftest import Receiver

SVC = {"service": "ranker", "model": "ctr", "version": "v3"}


@pytest.fixture
def tracing(receiver: Receiver) -> Iterator[Tracing]:
    tr = setup("ranker", endpoint=receiver.url, sample_ratio=1.0, install_global=False)
    yield tr
    tr.shutdown()


def test_the_run_span_is_a_child_of_the_request(receiver: Receiver, tracing: Tracing) -> None:
    with Monitor(**SVC, tracing=tracing) as m:
        model = m.instrument_onnx(session(["CPUExecutionProvider"]))

        async def predict(req: Request) -> PlainTextResponse:
            with m.stage("preprocess"):
                x = np.ones((4, 5), np.float32)
            with m.stage("model"):
                y = model.run(None, {"x": x})[0]
            with m.stage("postprocess"):
                text = f"{float(y[0, 0]):.3f}"
            return PlainTextResponse(text)

        with TestClient(m.asgi(Starlette(routes=[Route("/predict", predict, methods=["POST"])]))) as client:
            assert client.post("/predict").status_code == 200
        assert tracing.force_flush(60)
        assert receiver.wait_for(lambda spans: len(spans) >= 5)
        by_name = {s.name: s for s in receiver.spans}
        server, stage, run = by_name["POST /predict"], by_name["model"], by_name["onnxruntime.run"]
        assert len({s.trace_id for s in receiver.spans}) == 1
        assert run.parent_span_id == stage.span_id and stage.parent_span_id == server.span_id
        assert by_name["preprocess"].end_ns <= run.start_ns and run.end_ns <= by_name["postprocess"].start_ns
        assert run.attributes["inferwatch.batch_size"] == 4
        assert run.attributes["onnxruntime.provider"] == "CPUExecutionProvider"
        assert m.flush()
        assert m.get_sample_value("inferwatch_runtime_run_duration_seconds_count",
                                  {**SVC, "runtime": "onnxruntime"}) == 1
