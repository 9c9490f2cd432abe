"""``POST /api/v1/write``: Prometheus remote-write 1.0 into the store (agents, Collectors, Alloy push here).

The body is a snappy-compressed ``WriteRequest``: expanded by cramjam (the
edge agent's pure-Python codec where cramjam is missing), read straight into
columns by :mod:`inferwatch.formats.columnar` (label sets already seen are
found by their bytes), appended to the store as columns. Answers, as
Prometheus 2.42's ``--web.enable-remote-write-receiver`` does: 204 when
stored; 400 for a body that does not decode, a sample with an invalid metric
or label name, one stamped more than ``MAX_AHEAD_S`` ahead of the server's
clock or before 2000 (out of bounds, as scrapes refuse it), or a request over a
limit of ``server.limits`` (labels, lengths, samples, series; the message names
the limit; see ``_ingest_checks``) — then nothing of the request is
stored, as Prometheus rolls the request back, and a 400 tells the sender not
to retry. 401 without the server's write token, 413 over
``MAX_DECODED_BYTES``, 503 when the store cannot write (the sender retries).

Out-of-order and duplicate samples (a sender's retry of a batch already
stored) are dropped by the store and counted in its storage statistics, as
scraped ones are, and the request still answers 204: the samples of the
request that are new are kept (Prometheus would refuse the request whole).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError, StoreError
from inferwatch.config import Secret
from inferwatch.formats import SnappyTooLarge, snappy_decode
from inferwatch.formats.columnar import WriteRequestReader
from inferwatch.model import Clock
from inferwatch.server._reader import write_allowed
from inferwatch.server.ingest._ingest_checks import check_batch
from inferwatch.server.ingest._new_series_gc import NewSeriesGc
from inferwatch.store import LimitExceeded, Store, append_columns, count_discarded

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
    # label sets by their bytes: a sender repeats its series in every request, so (as a scrape
    # cache does) a known series skips decoding and validating its label set again
    reader: WriteRequestReader = field(default_factory=lambda: WriteRequestReader(MAX_CACHED_SERIES))
    sample_limit: int = 0  # ``server.limits.sample_limit``: most samples one request may carry
    label_limit: int = 0  # ``server.limits.label_limit``: a longer series is refused before it is decoded
    retention: float | None = None  # ``storage.retention``: older samples are out of bounds
    new_series_gc: NewSeriesGc | None = None  # ``serve``'s: many new series' objects leave the collector

    def __post_init__(self) -> None:
        self.reader.label_limit = self.label_limit

    def write(self, body: bytes) -> int:
        """Store one request; return its sample count (``_Refused`` with the status when refused)."""
        decoded = self.reader.decoded
        try:
            cols = self.reader.read(snappy_decode(body, max_bytes=MAX_DECODED_BYTES))
        except SnappyTooLarge as exc:
            raise _Refused(413, f"remote-write: {exc}") from None
        except LimitExceeded as exc:
            count_discarded(self.store, exc.reason, 1)
            raise _Refused(400, f"{exc}; nothing of this request was stored") from None
        except (ValueError, IndexError) as exc:  # UnicodeDecodeError is a ValueError
            raise _Refused(400, f"not a snappy-compressed remote-write WriteRequest: {exc}") from None
        try:
            check_batch(self.store, cols.labels, cols.t, self.clock.now(), sample_limit=self.sample_limit,
                        what="this remote-write request", retention=self.retention)
            append_columns(self.store, cols.labels, cols.t, cols.v)
        except LimitExceeded as exc:
            self.reader.forget()  # a refused label set is not worth remembering (it may be huge)
            raise _Refused(400, f"{exc}; nothing of this request was stored"
                           if "nothing of" not in str(exc) else str(exc)) from None
        except InputError as exc:
            raise _Refused(400, str(exc)) from None
        except StoreError as exc:
            raise _Refused(503, f"store: {exc}") from None
        if self.new_series_gc is not None:
            self.new_series_gc.created(self.reader.decoded - decoded)
        return len(cols.labels)


def remote_write_routes(receiver: RemoteWriteReceiver, token: Secret) -> list[Route]:
    """``POST /api/v1/write``, guarded by the server's write token."""

    async def post(req: Request) -> Response:
        try:
            if not write_allowed(req, token):
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
