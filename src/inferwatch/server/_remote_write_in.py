"""``POST /api/v1/write``: Prometheus remote-write 1.0 into the store (agents, Collectors, Alloy push here).

The body is a snappy-compressed ``WriteRequest``: decompressed by the edge
agent's snappy codec, parsed by protobuf's C parser when ``protobuf`` is
installed (the message types built at first use from the four messages of
Prometheus's ``prompb``; about twice as fast as the pure-Python reader), else by
the edge agent's hand-written reader (``inferwatch.edge.decode_write_request``). Answers, as Prometheus 2.42's
``--web.enable-remote-write-receiver`` does: 204 when stored; 400 for a body
that does not decode, a sample with an invalid metric or label name, or one
stamped more than ``MAX_AHEAD_S`` ahead of the server's clock (out of bounds,
as scrapes refuse it) — then nothing of the request is stored, as Prometheus
rolls the request back, and a 400 tells the sender not to retry. 401 without
the server's write token, 413 over ``MAX_DECODED_BYTES``, 503 when the store
cannot write (the sender retries).

Out-of-order and duplicate samples (a sender's retry of a batch already
stored) are dropped by the store and counted in its storage statistics, as
scraped ones are, and the request still answers 204: the samples of the
request that are new are kept (Prometheus would refuse the request whole).
"""

from __future__ import annotations

import functools
import hmac
import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError, StoreError
from inferwatch.config import Secret
from inferwatch.edge import decode_write_request
from inferwatch.server import _snappy
from inferwatch.model import Clock, Labels, Sample
from inferwatch.server._scrape_limits import MAX_AHEAD_S
from inferwatch.store import Store

__all__ = ["MAX_DECODED_BYTES", "WRITE_PATH", "RemoteWriteReceiver", "remote_write_routes"]

log = logging.getLogger(__name__)
WRITE_PATH = "/api/v1/write"
MAX_BODY_BYTES = 32 << 20  # the guard's limit for this path (``_guard.BODY_LIMITS``)
MAX_DECODED_BYTES = 32 << 20
MAX_CACHED_SERIES = 200_000  # label sets remembered (about 100 MB at most); forgotten all at once beyond


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class RemoteWriteReceiver:
    """Decodes and stores remote-write requests."""

    store: Store
    clock: Clock
    # label pairs as received -> Labels: a sender repeats its series in every request, so (as a
    # scrape cache does) a known series skips building and validating its label set again
    _series: dict[tuple[tuple[str, str], ...], Labels] = field(default_factory=dict)

    def write(self, body: bytes) -> int:
        """Store one request; return its sample count (``_Refused`` with the status when refused)."""
        if len(self._series) > MAX_CACHED_SERIES:
            self._series.clear()
        try:
            samples = _decode(body, self._series)
        except (ValueError, IndexError, UnicodeDecodeError) as exc:
            status = 413 if "once decompressed" in str(exc) else 400
            raise _Refused(status, f"not a snappy-compressed remote-write WriteRequest: {exc}") from None
        _check_bounds(samples, self.clock.now())
        try:
            self.store.append(samples)
        except InputError as exc:
            raise _Refused(400, str(exc)) from None
        except StoreError as exc:
            raise _Refused(503, f"store: {exc}") from None
        return len(samples)


def _decode(body: bytes, series: dict[tuple[tuple[str, str], ...], Labels]) -> list[Sample]:
    try:
        parse = _protobuf_reader()
    except ImportError:
        return decode_write_request(body, max_bytes=MAX_DECODED_BYTES)
    return parse(_snappy.decompress(body, max_bytes=MAX_DECODED_BYTES), series)


@functools.cache
def _protobuf_reader() -> Callable[[bytes, dict[tuple[tuple[str, str], ...], Labels]], list[Sample]]:
    """A parser of ``prometheus.WriteRequest`` (series, labels, samples; other fields skipped)."""
    # imported by name: protobuf is optional (the tracing extra) and ships no type stubs here
    descriptor_pb2 = importlib.import_module("google.protobuf.descriptor_pb2")
    descriptor_pool = importlib.import_module("google.protobuf.descriptor_pool")
    message_factory = importlib.import_module("google.protobuf.message_factory")
    decode_error = importlib.import_module("google.protobuf.message").DecodeError
    f = descriptor_pb2.FieldDescriptorProto
    file = descriptor_pb2.FileDescriptorProto(name="inferwatch_prompb.proto", package="inferwatch_prompb",
                                              syntax="proto3")
    for name, fields in (("Label", [("name", 1, f.TYPE_STRING, ""), ("value", 2, f.TYPE_STRING, "")]),
                         ("Sample", [("value", 1, f.TYPE_DOUBLE, ""), ("timestamp", 2, f.TYPE_INT64, "")]),
                         ("TimeSeries", [("labels", 1, f.TYPE_MESSAGE, "Label"),
                                         ("samples", 2, f.TYPE_MESSAGE, "Sample")]),
                         ("WriteRequest", [("timeseries", 1, f.TYPE_MESSAGE, "TimeSeries")])):
        msg = file.message_type.add(name=name)
        for field_name, number, kind, ref in fields:
            msg.field.add(name=field_name, number=number, type=kind,
                          label=f.LABEL_REPEATED if ref else f.LABEL_OPTIONAL,
                          type_name=f".inferwatch_prompb.{ref}" if ref else None)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file)
    descriptor = pool.FindMessageTypeByName("inferwatch_prompb.WriteRequest")
    write_request = message_factory.GetMessageClass(descriptor)

    def parse(raw: bytes, series: dict[tuple[tuple[str, str], ...], Labels]) -> list[Sample]:
        req = write_request()
        try:
            req.ParseFromString(raw)
        except decode_error as exc:
            raise ValueError(f"protobuf: {exc}") from None
        out: list[Sample] = []
        for ts in req.timeseries:
            pairs = tuple([(label.name, label.value) for label in ts.labels])
            labels = series.get(pairs)
            if labels is None:
                labels = series[pairs] = Labels(pairs)
            out += [Sample(labels, s.timestamp / 1000.0, s.value) for s in ts.samples]
        return out

    return parse


def _check_bounds(samples: list[Sample], now: float) -> None:
    bound = now + MAX_AHEAD_S
    ahead = [s for s in samples if s.t > bound]
    if ahead:
        raise _Refused(400, f"out of bounds: {len(ahead)} samples stamped more than {MAX_AHEAD_S:g}s ahead "
                            f"of the server's clock (first: {ahead[0].labels} at {ahead[0].t:.3f}); "
                            "nothing of this request was stored")


def remote_write_routes(receiver: RemoteWriteReceiver, token: Secret) -> list[Route]:
    """``POST /api/v1/write``, guarded by the server's write token."""

    async def post(req: Request) -> Response:
        try:
            if not hmac.compare_digest(req.headers.get("authorization", "").encode(),
                                       f"Bearer {token.reveal()}".encode()):
                raise _Refused(401, "writes need 'Authorization: Bearer <token>' "
                                    "(see the server's first start)")
            body = await _body(req)
            await run_in_threadpool(receiver.write, body)
        except _Refused as exc:
            if exc.status == 400:
                log.info("remote write refused: %s", exc)
            return JSONResponse({"status": "error", "errorType": "bad_data", "error": str(exc)},
                                status_code=exc.status)
        return Response(status_code=204)

    return [Route(WRITE_PATH, post, methods=["POST"])]


async def _body(req: Request) -> bytes:
    declared = req.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise _Refused(413, f"body of {declared} bytes, over the limit of {MAX_BODY_BYTES}")
    body = bytearray()
    try:
        async for chunk in req.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                raise _Refused(413, f"body over the limit of {MAX_BODY_BYTES} bytes")
    except ClientDisconnect:
        raise _Refused(400, "the client disconnected before sending the whole body") from None
    return bytes(body)
