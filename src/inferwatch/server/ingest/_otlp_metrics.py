"""``POST /v1/metrics``: OTLP/HTTP metrics in, translated to Prometheus series, into the store.

Answers as the OTLP/HTTP specification says (and as Prometheus 2.47+'s OTLP
receiver, whose path ``/api/v1/otlp/v1/metrics`` is served too):

* 200 with an ``ExportMetricsServiceResponse`` in the request's encoding; when
  some data points were refused (see ``_otlp_translate``) its
  ``partial_success`` holds ``rejected_data_points`` and ``error_message``;
* 400 a malformed body (not protobuf / JSON of the request, bad gzip), 401 no
  or a wrong ``Authorization: Bearer <token>`` (the server's write token),
  413 a body over ``MAX_BODY_BYTES`` before or after gzip or with over
  ``MAX_POINTS`` (200,000) data points, 415 another content
  type, 503 when the store cannot write (the exporter retries). Error bodies are
  a ``google.rpc.Status`` for protobuf requests, the server's JSON error otherwise.

Samples pass the same store checks as scraped ones (names, time order), and
points stamped more than ``MAX_AHEAD_S`` ahead are refused, as scrapes refuse them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError, StoreError
from inferwatch.config import Secret
from inferwatch.model import Clock, GunzipError, gunzip_bounded, loads_json
from inferwatch.server._reader import write_allowed
from inferwatch.server.ingest._ingest_checks import check_batch
from inferwatch.server.ingest._otlp_decode import (
    OtlpError,
    TooManyPoints,
    decode_metrics_json,
    decode_metrics_protobuf,
)
from inferwatch.server.ingest._otlp_delta import DeltaState
from inferwatch.server.ingest._otlp_translate import Translation, translate
from inferwatch.store import LimitExceeded, Store

__all__ = ["MAX_BODY_BYTES", "METRICS_PATHS", "OtlpMetricsReceiver", "otlp_metrics_routes"]

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 32 * 1024 * 1024  # the guard's limit for these paths (``_guard.BODY_LIMITS``)
METRICS_PATHS = ("/v1/metrics", "/api/v1/otlp/v1/metrics")
PROTOBUF = "application/x-protobuf"
_STATUS_INVALID_ARGUMENT, _STATUS_UNAVAILABLE = 3, 14


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class OtlpMetricsReceiver:
    """Decodes, translates and stores OTLP metric exports (delta state kept in ``delta``)."""

    store: Store
    clock: Clock
    delta: DeltaState
    sample_limit: int = 0  # ``server.limits.sample_limit``: most samples one request may carry
    retention: float | None = None  # ``storage.retention``: older samples are out of bounds

    def export(self, body: bytes, protobuf: bool) -> Translation:
        """Store one request body; ``_Refused`` (400/503) when it cannot be taken at all."""
        try:
            resources = decode_metrics_protobuf(body) if protobuf else decode_metrics_json(_json(body))
        except TooManyPoints as exc:
            raise _Refused(413, str(exc)) from None
        except OtlpError as exc:
            raise _Refused(400, str(exc)) from None
        now = self.clock.now()
        result = translate(resources, now=now, delta=self.delta)
        try:
            samples = result.samples
            check_batch(self.store, [s.labels for s in samples], [s.t for s in samples], now,
                        sample_limit=self.sample_limit, what="this OTLP request", retention=self.retention)
            self.store.append(samples)
        except LimitExceeded as exc:  # labels, lengths, series (the store's), samples, time bounds
            raise _Refused(400, f"refused: {exc}") from None
        except InputError as exc:  # the translation makes valid names; a bug if reached
            raise _Refused(400, f"samples refused by the store: {exc}") from None
        except StoreError as exc:
            raise _Refused(503, f"store: {exc}") from None
        return result


def otlp_metrics_routes(receiver: OtlpMetricsReceiver, token: Secret) -> list[Route]:
    """``POST /v1/metrics`` and its Prometheus-style alias, guarded by the write token."""

    async def post(req: Request) -> Response:
        ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
        protobuf = ctype == PROTOBUF
        try:
            if not write_allowed(req, token):
                raise _Refused(401, "writes need 'Authorization: Bearer <token>' "
                                    "(see the server's first start)")
            if ctype not in (PROTOBUF, "application/json"):
                raise _Refused(415, f"unsupported content type {ctype!r}: "
                                    f"send {PROTOBUF} or application/json")
            body = await _body(req)
            result = await run_in_threadpool(receiver.export, body, protobuf)
        except _Refused as exc:
            return _error(exc.status, str(exc), protobuf)
        except ImportError:
            return _error(415, "protobuf needs opentelemetry-proto (pip install 'inferwatch[tracing]'); "
                               "send application/json", False)
        if result.rejected:
            log.info("OTLP metrics: %d data points refused: %s", result.rejected, result.error_message)
        return _answer(result, protobuf)

    return [Route(path, post, methods=["POST"]) for path in METRICS_PATHS]


async def _body(req: Request) -> bytes:
    declared = req.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _Refused(413, f"body of {declared} bytes, over the limit of {MAX_BODY_BYTES}")
    chunks, size = [], 0
    try:
        async for chunk in req.stream():
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise _Refused(413, f"body over the limit of {MAX_BODY_BYTES} bytes")
            chunks.append(chunk)
    except ClientDisconnect:
        raise _Refused(400, "the client disconnected before sending the whole body") from None
    body = b"".join(chunks)
    encoding = req.headers.get("content-encoding", "").strip().lower()
    if encoding == "gzip" or (encoding == "" and body[:2] == b"\x1f\x8b"):  # a damaged one says gzip
        return _gunzip(body)
    if encoding not in ("", "identity"):
        raise _Refused(415, f"unsupported content encoding {encoding!r}: send gzip or none")
    return body


def _gunzip(body: bytes) -> bytes:
    try:
        return gunzip_bounded(body, MAX_BODY_BYTES)
    except GunzipError as exc:
        raise _Refused(413 if exc.too_large else 400, str(exc)) from None


def _json(body: bytes) -> object:
    try:
        return loads_json(body)
    except InputError as exc:
        raise OtlpError(f"invalid JSON: {exc}") from None


def _answer(result: Translation, protobuf: bool) -> Response:
    if protobuf:
        from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
            ExportMetricsServiceResponse,
        )

        msg = ExportMetricsServiceResponse()
        if result.rejected:
            msg.partial_success.rejected_data_points = result.rejected
            msg.partial_success.error_message = result.error_message
        return Response(msg.SerializeToString(), media_type=PROTOBUF)
    if not result.rejected:
        return JSONResponse({})
    return JSONResponse({"partialSuccess": {"rejectedDataPoints": str(result.rejected),
                                            "errorMessage": result.error_message}})


def _error(status: int, message: str, protobuf: bool) -> Response:
    if protobuf:  # a google.rpc.Status {code, message}, written by hand (two fields)
        code = _STATUS_UNAVAILABLE if status == 503 else _STATUS_INVALID_ARGUMENT
        text = message.encode()
        body = bytes([0x08, code, 0x12]) + _varint(len(text)) + text
        return Response(body, status_code=status, media_type=PROTOBUF)
    return JSONResponse({"status": "error", "errorType": "bad_data", "error": message}, status_code=status)


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
