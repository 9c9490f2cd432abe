"""The server's trace endpoints: OTLP/HTTP ``POST /v1/traces`` in, ``/api/v1/traces`` out.

Bodies are protobuf (``application/x-protobuf``) or JSON (``application/json``),
optionally gzip-compressed as the OTLP exporters send them. A body over
``MAX_BODY_BYTES`` (before or after decompression) is answered 413, a malformed
one 400 (damaged or truncated gzip says gzip, also without ``Content-Encoding``),
a write without the server's token 401; nothing a client sends produces a 500.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.config import Secret
from inferwatch.model import Clock, GunzipError, gunzip_bounded, loads_json
from inferwatch.server._reader import write_allowed
from inferwatch.tracing import OtlpError, SpanRecord, TraceStore, breakdown, decode_json, decode_protobuf

__all__ = ["MAX_BODY_BYTES", "TRACES_FILE", "SpanHook", "TraceApi", "open_trace_store", "trace_routes"]

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 4 * 1024 * 1024
TRACES_FILE = "traces.sqlite"
PROTOBUF = "application/x-protobuf"
GZIP_MAGIC = b"\x1f\x8b"


class _TooLarge(Exception):
    pass


def open_trace_store(state_dir: Path | None, clock: Clock) -> TraceStore:
    """The server's trace store: in ``state_dir`` (beside the TSDB), in memory without one."""
    return TraceStore(state_dir / TRACES_FILE if state_dir is not None else ":memory:", clock=clock)


SpanHook = Callable[[Sequence[SpanRecord]], object]
"""Called with each request's spans once stored (the GenAI quality counts); its failures are logged."""


class TraceApi:
    """The OTLP trace receiver and the trace query API over a trace store: one method an endpoint."""

    def __init__(self, store: TraceStore, token: Secret | None = None,
                 on_spans: SpanHook | None = None) -> None:
        self.store = store
        self.token = token
        self.on_spans = on_spans

    def routes(self) -> list[Route]:
        """Every endpoint of this API, registered here and nowhere else."""
        return [
            Route("/v1/traces", self.receive, methods=["POST"]),
            Route("/api/v1/traces", self.list_traces, methods=["GET"]),
            Route("/api/v1/traces/stages", self.stages, methods=["GET"]),  # before {trace_id}: in order
            Route("/api/v1/traces/{trace_id}", self.one_trace, methods=["GET"]),
        ]

    async def receive(self, req: Request) -> Response:
        if self.token is not None and not write_allowed(req, self.token):
            return _error("writes need 'Authorization: Bearer <token>' (see the server's first start)", 401)
        ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype not in (PROTOBUF, "application/json"):
            return _error(f"unsupported content type {ctype!r}: send {PROTOBUF} or application/json", 415)
        try:
            body = await _body(req)
            # Decoding and the SQLite write run off the event loop: other requests keep flowing.
            spans = await run_in_threadpool(_decode, body, ctype == PROTOBUF)
        except _TooLarge:
            return _error(f"body over {MAX_BODY_BYTES} bytes", 413)
        except OtlpError as exc:
            return _error(str(exc), 400)
        except ImportError:
            return _error("protobuf needs opentelemetry-proto (pip install 'inferwatch[tracing]'); "
                          "send application/json", 415)
        await run_in_threadpool(self.store.add, spans)
        if self.on_spans is not None:
            try:
                await run_in_threadpool(self.on_spans, spans)
            except Exception:  # the spans are stored: what they count is a bonus, never a 500
                log.exception("OTLP traces: counting %d spans failed", len(spans))
        if ctype == PROTOBUF:
            return Response(b"", media_type=PROTOBUF)  # an empty ExportTraceServiceResponse
        return JSONResponse({})

    def list_traces(self, req: Request) -> Response:
        q = req.query_params
        try:
            min_duration = _number(q.get("min_duration"), 0.0)
            start, end = _number(q.get("start"), 0.0), _number(q.get("end"), 2**62 / 1e9)
            limit = int(_number(q.get("limit"), 20))
        except ValueError as exc:
            return _error(str(exc), 400)
        found = self.store.traces(service=q.get("service") or None, min_duration_s=min_duration,
                             start_ns=int(start * 1e9), end_ns=int(end * 1e9), limit=max(1, min(limit, 1000)))
        return JSONResponse({"status": "success", "data": [t.to_json() for t in found]})

    def stages(self, req: Request) -> Response:
        q = req.query_params
        try:
            start, end = _number(q.get("start"), 0.0), _number(q.get("end"), 2**62 / 1e9)
        except ValueError as exc:
            return _error(str(exc), 400)
        service = q.get("service")
        if not service:
            return _error("missing parameter 'service'", 400)
        stats = breakdown(self.store.stage_durations(service, int(start * 1e9), int(end * 1e9)))
        return JSONResponse({"status": "success", "data": {k: v.to_json() for k, v in stats.items()}})

    def one_trace(self, req: Request) -> Response:
        trace_id = str(req.path_params["trace_id"]).lower()
        if len(trace_id) != 32 or not all(c in "0123456789abcdef" for c in trace_id):
            return _error(f"trace id must be 32 hex digits, got {trace_id!r}", 400)
        spans = self.store.trace(trace_id)
        if not spans:
            return _error(f"trace {trace_id} not found", 404)
        return JSONResponse({"status": "success", "data": {"trace_id": trace_id,
                                                           "spans": [s.to_json() for s in spans]}})


def trace_routes(store: TraceStore, token: Secret | None = None,
                 on_spans: SpanHook | None = None) -> list[Route]:
    """``TraceApi``'s routes (``on_spans``: what else each request's spans feed)."""
    return TraceApi(store, token, on_spans).routes()


def _decode(body: bytes, protobuf: bool) -> list[SpanRecord]:
    return decode_protobuf(body) if protobuf else decode_json(_json(body))


async def _body(req: Request) -> bytes:
    declared = req.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _TooLarge
    chunks, size = [], 0
    async for chunk in req.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise _TooLarge
        chunks.append(chunk)
    body = b"".join(chunks)
    # gzip data without its header (or with it) is read as gzip, so a damaged one says gzip, not JSON
    if req.headers.get("content-encoding", "").lower() == "gzip" or body[:2] == GZIP_MAGIC:
        body = _gunzip(body)
    return body


def _gunzip(body: bytes) -> bytes:
    try:
        return gunzip_bounded(body, MAX_BODY_BYTES)
    except GunzipError as exc:
        if exc.too_large:
            raise _TooLarge from None
        raise OtlpError(f"invalid JSON: {exc}") from None


def _json(body: bytes) -> object:
    try:
        return loads_json(body)
    except InputError as exc:
        raise OtlpError(f"invalid JSON: {exc}") from None


def _number(raw: str | None, default: float) -> float:
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"not a number: {raw!r}") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"must be finite and >= 0: {raw!r}")
    return value


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": "bad_data", "error": message}, status_code=status)
