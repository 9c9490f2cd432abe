"""A real OTLP/HTTP receiver on loopback: decodes ``ExportTraceServiceRequest`` with opentelemetry-proto."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as the receiver decoded it (ids as hex, as Jaeger shows them)."""

    service: str
    trace_id: str
    span_id: str
    parent_span_id: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    attributes: dict[str, object]

    @property
    def duration_s(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


@dataclass
class Receiver:
    """The spans received so far; ``wait_for`` polls (bounded) under a condition, never sleeps."""

    url: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    cond: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, predicate: Callable[[list[ReceivedSpan]], bool], timeout: float = 60.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: predicate(self.spans), timeout)

    def traces(self) -> dict[str, list[ReceivedSpan]]:
        with self.cond:
            out: dict[str, list[ReceivedSpan]] = {}
            for s in self.spans:
                out.setdefault(s.trace_id, []).append(s)
            return out


def _value(v: object) -> object:
    which = v.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(v, which) if which else None


def decode(body: bytes) -> list[ReceivedSpan]:
    """The spans of one OTLP/HTTP protobuf body."""
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    out = []
    for rs in req.resource_spans:
        res = {a.key: _value(a.value) for a in rs.resource.attributes}
        for ss in rs.scope_spans:
            for s in ss.spans:
                out.append(ReceivedSpan(
                    str(res.get("service.name", "")), s.trace_id.hex(), s.span_id.hex(),
                    s.parent_span_id.hex(), s.name, s.kind, s.start_time_unix_nano, s.end_time_unix_nano,
                    s.status.code, {a.key: _value(a.value) for a in s.attributes},
                ))
    return out


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            spans = decode(body)
            with state.cond:
                state.requests += 1
                state.spans.extend(spans)
                state.cond.notify_all()
            data = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    th = threading.Thread(target=server.serve_forever, daemon=True)
    th.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    yield state
    server.shutdown()
    server.server_close()
    th.join(10)
