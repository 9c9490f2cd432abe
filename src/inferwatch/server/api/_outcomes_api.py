"""``POST /api/v1/outcomes``: delayed labels from any process; ``GET`` hands them to the SDK's pollers.

A label often arrives hours or days after the prediction, in another process
(a billing job, a human review queue). It POSTs them here::

    {"outcomes": [{"request_id": "r-17", "label": 1, "model": "ctr", "time": 1700000000}]}

(``label``: a number, string or boolean; ``model`` and ``time`` optional). The
server keeps them in a bounded table (``_outcome_store``) and each Monitor
that made predictions polls ``GET /api/v1/outcomes?after=SEQ&limit=N[&model=M]``
and joins the ones it knows (``Monitor.poll_labels``).

Answers: 200 ``{"status": "success", "data": {"stored": n, "first": seq, "last": seq}}``;
400 naming the field and index (``body.outcomes[3].label: ...``), nothing stored;
401 without the server's write token; 413 a body over ``server.http.max_body_bytes``
(the guard), over ``MAX_DECODED_BYTES`` once gunzipped, or carrying more than
``server.outcomes.max_per_request`` outcomes; 415 a ``Content-Encoding`` other than gzip;
503 when the table cannot be written. The server's counts go to its store as
``inferwatch_outcomes_received_total``, ``inferwatch_outcomes_dropped_total{reason}`` and
``inferwatch_outcomes_stored``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError, StoreError
from inferwatch.collect import sample
from inferwatch.config import OutcomesConfig, Secret
from inferwatch.model import Clock, GunzipError, gunzip_bounded, loads_json, shown
from inferwatch.model import metrics as m
from inferwatch.server._guard import json_depth
from inferwatch.server._outcome_store import Label, Outcome, OutcomeStore
from inferwatch.server._reader import write_allowed
from inferwatch.server.ingest import MAX_AHEAD_S, MIN_TIME
from inferwatch.store import Store

__all__ = ["MAX_DECODED_BYTES", "OUTCOMES_PATH", "OutcomesApi", "outcome_routes", "parse_outcomes"]

OUTCOMES_PATH = "/api/v1/outcomes"
MAX_DECODED_BYTES = 16 << 20  # a gzip'ed body expands to at most this
DEFAULT_PAGE = 1000
_FIELDS = frozenset({"request_id", "label", "model", "time"})
_JSON_TYPES = {"NoneType": "null", "list": "an array", "dict": "an object", "str": "a string",
               "bool": "a boolean", "int": "a number", "float": "a number"}
_ERROR_TYPES = {400: "bad_data", 401: "unauthorized", 413: "too_large", 415: "unsupported_encoding",
                503: "unavailable"}


class _Refused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _string(value: Any, where: str, limit: int, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise InputError(f"{where}: expected a string, got {_kind(value)}")
    if not value and not empty:
        raise InputError(f"{where}: must not be empty")
    if len(value) > limit:
        raise InputError(f"{where}: {len(value)} characters, over server.outcomes.max_string_length {limit}")
    return value


def _kind(value: Any) -> str:
    """The JSON name of ``value``'s type (what the client sent)."""
    return _JSON_TYPES.get(type(value).__name__, type(value).__name__)


def _label(value: Any, where: str, limit: int) -> Label:
    if isinstance(value, bool | str):
        return value if isinstance(value, bool) else _string(value, where, limit, empty=True)
    if isinstance(value, int):
        if abs(value) >= 1 << 63:
            raise InputError(f"{where}: integer out of the 64-bit range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InputError(f"{where}: {value} is not a finite number")
        return value
    raise InputError(f"{where}: expected a number, string or boolean, got {_kind(value)}")


def _time(value: Any, where: str, now: float) -> float | None:
    if value is None:
        return None
    # an integer too large for a float is not finite either (float() would raise OverflowError: a 500)
    seconds = float(value) if isinstance(value, float) or (
        isinstance(value, int) and not isinstance(value, bool) and abs(value) < 1 << 62) else math.nan
    if not math.isfinite(seconds):
        raise InputError(f"{where}: expected Unix seconds (a finite number), got {value!r:.40}")
    if not MIN_TIME <= seconds <= now + MAX_AHEAD_S:
        raise InputError(f"{where}: {seconds:.3f} is before 2000-01-01 or more than {MAX_AHEAD_S:g}s "
                         f"ahead of the server's clock ({now:.3f}); times are Unix seconds")
    return seconds


def parse_outcomes(doc: Any, config: OutcomesConfig, now: float) -> list[Outcome]:
    """The outcomes of a POST body (``InputError`` naming the field and index; ``_Refused`` 413 beyond
    ``max_per_request``)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("outcomes"), list):
        raise InputError('body: expected a JSON object {"outcomes": [...]}')
    items, limit = doc["outcomes"], config.max_string_length
    if len(items) > config.max_per_request:
        raise _Refused(413, f"body.outcomes: {len(items)} outcomes, over server.outcomes.max_per_request "
                            f"{config.max_per_request}; send them in smaller requests")
    out = []
    for i, item in enumerate(items):
        where = f"body.outcomes[{i}]"
        if not isinstance(item, dict):
            raise InputError(f"{where}: expected an object with request_id and label")
        extra = sorted(set(item) - _FIELDS)
        if extra:
            raise InputError(f"{where}: unknown field {extra[0]!r:.80} "
                             "(fields: label, model, request_id, time)")
        if "label" not in item:
            raise InputError(f"{where}.label: required")
        out.append(Outcome(_string(item.get("request_id"), f"{where}.request_id", limit),
                           _label(item["label"], f"{where}.label", limit),
                           _string(item.get("model", ""), f"{where}.model", limit, empty=True),
                           _time(item.get("time"), f"{where}.time", now)))
    return out


class OutcomesApi:
    """Takes and serves outcomes; writes the table's counts to ``metrics_to`` (the server's store)."""

    def __init__(self, store: OutcomeStore, metrics_to: Store, clock: Clock, *, max_json_depth: int = 32
                 ) -> None:
        self.store, self.metrics_to, self.clock = store, metrics_to, clock
        self.max_json_depth = max_json_depth
        self._written: tuple[int, ...] = ()
        self._lock = threading.Lock()  # two requests at once write one set of samples, not two

    def post(self, body: bytes, encoding: str) -> dict[str, Any]:
        """Store the outcomes of one POST body; raises ``_Refused`` or ``InputError``."""
        if encoding == "gzip":
            try:
                body = gunzip_bounded(body, MAX_DECODED_BYTES)
            except GunzipError as exc:
                raise _Refused(413 if exc.too_large else 400, str(exc)) from None
        elif encoding not in ("", "identity"):
            raise _Refused(415, f"Content-Encoding {encoding[:40]!r}: only gzip is accepted")
        if json_depth(body) > self.max_json_depth:
            raise InputError(f"body: nested deeper than {self.max_json_depth} levels")
        doc = loads_json(body)
        outcomes = parse_outcomes(doc, self.store.config, self.clock.now())
        first, last = self.store.add(outcomes) if outcomes else (0, 0)
        self.write_counts()
        return {"stored": last - first + 1 if outcomes else 0, "first": first, "last": last}

    def get(self, params: Mapping[str, str]) -> dict[str, Any]:
        """The page of outcomes ``params`` ask for (``after``, ``limit``, ``model``)."""
        most = self.store.config.max_per_request
        after = _int(params, "after", 0, 0, 1 << 62)
        limit = _int(params, "limit", min(DEFAULT_PAGE, most), 1, most)
        model = params.get("model")
        page = self.store.after(after, limit, model)
        self.write_counts()
        return {"outcomes": [o.to_json() for o in page.outcomes], "next": page.next, "last": page.last,
                "epoch": page.epoch}

    def write_counts(self) -> None:
        """Append the table's counts to the server's store when they changed since the last time."""
        st = self.store
        with self._lock:
            counts = (st.received, st.dropped["age"], st.dropped["rows"], st.rows)
            if counts == self._written:
                return
            now = self.clock.now()
            self.metrics_to.append([
                sample(m.OUTCOMES_RECEIVED_TOTAL, now, counts[0]),
                sample(m.OUTCOMES_DROPPED_TOTAL, now, counts[1], {"reason": "age"}),
                sample(m.OUTCOMES_DROPPED_TOTAL, now, counts[2], {"reason": "rows"}),
                sample(m.OUTCOMES_STORED, now, counts[3])])
            self._written = counts


def _int(params: Mapping[str, str], name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise InputError(f"invalid parameter {name!r}: {shown(raw)} is not an integer") from None
    if not low <= value <= high:
        raise InputError(f"invalid parameter {name!r}: {value if len(raw) <= 40 else shown(raw)} is outside "
                         f"{low}..{high}")
    return value


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": _ERROR_TYPES.get(status, "bad_data"),
                         "error": message}, status_code=status)


def outcome_routes(api: OutcomesApi, token: Secret) -> list[Route]:
    """``POST /api/v1/outcomes`` (the server's write token) and ``GET /api/v1/outcomes``."""

    async def post(req: Request) -> Response:
        if not write_allowed(req, token):
            return _error(401, "writes need 'Authorization: Bearer <token>' (server.api_token, else the "
                               "data directory's api_token file)")
        body = await req.body()  # the guard has bounded it (server.http.max_body_bytes)
        encoding = req.headers.get("content-encoding", "").strip().lower()
        return await _answer(api.post, body, encoding)

    async def get(req: Request) -> Response:
        return await _answer(api.get, dict(req.query_params))

    return [Route(OUTCOMES_PATH, post, methods=["POST"]), Route(OUTCOMES_PATH, get, methods=["GET"])]


async def _answer(fn: Any, *args: Any) -> Response:
    try:
        data = await run_in_threadpool(fn, *args)
    except _Refused as exc:
        return _error(exc.status, str(exc))
    except InputError as exc:
        return _error(400, str(exc))
    except StoreError as exc:
        return _error(503, f"store: {exc}")
    return JSONResponse({"status": "success", "data": data})
