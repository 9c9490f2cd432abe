"""The on-call HTTP API: acknowledgements, groups with their state, history, MTTA/MTTR, who is on call.

    POST /api/v1/alerts/ack        {group_id | matchers, by, comment?, expires?}  (token; each channel
                                   the escalation paged is sent "Acknowledged by ...")
    POST /api/v1/alerts/unack      {group_id | matchers, by}                      (token)
    POST /api/v1/alerts/voice/tencent  Tencent Cloud VMS's status callback (no token: Tencent sends
                                   none; only a waiting call's id with its number settles that call)
    GET  /api/v1/alerts/oncall-groups             groups with acknowledgement and escalation
    GET  /api/v1/alerts/history    ?match[]=&start=&end=&kind=&group=&limit=
    GET  /api/v1/alerts/stats      ?start=&end=&by=   MTTA and MTTR per service and tier
    GET  /api/v1/oncall            ?time=             who is on call now, and next

The one-click acknowledgement link (``/api/v1/alerts/ack/link``) opens the incident page, which
lives with the dashboard (``server/web/_incident.py``).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.alerting import EVENT_KINDS, AcksHandle, fingerprint, group_id, shifts
from inferwatch.config import Secret
from inferwatch.model import Matcher, parse_duration, parse_matchers
from inferwatch.server._reader import actor
from inferwatch.server.api._alerting_api import json_body, write_guard
from inferwatch.server.api._prom_params import parse_time

__all__ = ["ACK_KEY_FILE", "OnCallApi", "load_ack_key", "oncall_routes"]

ACK_KEY_FILE = "ack_key"
MAX_HISTORY = 10_000  # events in one answer


def load_ack_key(data_dir: Path | None) -> bytes:
    """The key signing acknowledgement links: ``data_dir/ack_key`` (0600, made at first start)."""
    if data_dir is None:
        return secrets.token_bytes(32)
    path = data_dir / ACK_KEY_FILE
    if path.is_file():
        return bytes.fromhex(path.read_text().strip())
    key = secrets.token_bytes(32)
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    return key


def _matchers(raw: Any, where: str) -> list[Matcher]:
    if raw is None:
        return []
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise InputError(f"{where}: expected a list of matcher strings such as 'alertname=\"Down\"'")
    try:
        return [m for text in raw for m in parse_matchers(text)]
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def _expiry(raw: Any, now: float) -> float | None:
    if raw in (None, ""):
        return None
    text = str(raw)
    try:
        return now + parse_duration(text)
    except ValueError:
        pass
    try:
        return parse_time(text, "expires")
    except Exception:
        raise InputError(f"ack expires: a duration such as 2h or an RFC 3339 time, "
                         f"got {text[:64]!r}") from None


def _selection(body: Any) -> tuple[str, list[Matcher]]:
    if not isinstance(body, dict):
        raise InputError("ack: expected a JSON object")
    gid = body.get("group_id") or ""
    if not isinstance(gid, str):
        raise InputError("ack group_id: expected a string")
    return gid, _matchers(body.get("matchers"), "ack matchers")


def _time_param(request: Request, name: str, default: float) -> float:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return parse_time(raw, name)
    except Exception:
        raise InputError(f"{name}: unix seconds or RFC 3339, got {raw[:64]!r}") from None


class OnCallApi:
    """Acknowledgements, groups, history, MTTA/MTTR, who is on call, voice callbacks: a method an endpoint."""

    def __init__(self, acks: AcksHandle, token: Secret) -> None:
        self.acks = acks
        self.token = token
        self.clock = self.acks.clock

    def routes(self) -> list[Route]:
        """Every endpoint of this API, registered here and nowhere else."""
        return [
            Route("/api/v1/alerts/ack", write_guard(self.token, self.ack), methods=["POST"]),
            Route("/api/v1/alerts/unack", write_guard(self.token, self.unack), methods=["POST"]),
            Route("/api/v1/alerts/voice/tencent", self.voice, methods=["POST"]),
            Route("/api/v1/alerts/oncall-groups", self._read(self.groups), methods=["GET"]),
            Route("/api/v1/alerts/history", self._read(self.history), methods=["GET"]),
            Route("/api/v1/alerts/stats", self._read(self.stats), methods=["GET"]),
            Route("/api/v1/oncall", self._read(self.oncall), methods=["GET"]),
        ]

    async def ack(self, request: Request) -> Response:
        body = await json_body(request)
        gid, ms = _selection(body)
        now = self.clock.now()
        done = await run_in_threadpool(
            self.acks.acknowledge, now, actor(request, str(body.get("by") or "")),
            str(body.get("comment") or ""),
            gid=gid, matchers=ms, expires_at=_expiry(body.get("expires"), now), tell=True)
        return JSONResponse({"acknowledged": [a.to_json() for a in done]})

    async def unack(self, request: Request) -> Response:
        body = await json_body(request)
        gid, ms = _selection(body)
        by = actor(request, str(body.get("by") or "api"))
        done = await run_in_threadpool(self.acks.unacknowledge, self.clock.now(), by,
                                       gid=gid, matchers=ms)
        return JSONResponse({"unacknowledged": [a.to_json() for a in done]})

    async def groups(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self.acks.group_states, self.clock.now()))

    async def history(self, request: Request) -> Response:
        try:
            sets = [_matchers(t, "match[]") for t in request.query_params.getlist("match[]")]
            kinds = request.query_params.getlist("kind")
            bad = [k for k in kinds if k not in EVENT_KINDS]
            if bad:
                raise InputError(f"kind: unknown {bad} (known: {list(EVENT_KINDS)})")
            limit = int(request.query_params.get("limit") or MAX_HISTORY)
        except ValueError:
            return JSONResponse({"error": "limit: an integer"}, status_code=400)
        gid = request.query_params.get("group", "")
        fps = [fingerprint(a) for g in self.acks.groups(self.clock.now()) if gid and group_id(g.key) == gid
               for a in g.alerts]
        events = await run_in_threadpool(
            self.acks.history.query, sets, _time_param(request, "start", float("-inf")),
            _time_param(request, "end", float("inf")), kinds, gid, max(1, min(limit, MAX_HISTORY)), fps)
        return JSONResponse({"status": "success", "data": [e.to_json() for e in events]})

    async def stats(self, request: Request) -> Response:
        now = self.clock.now()
        by = tuple(request.query_params.getlist("by")) or ("service", "tier")
        rows = await run_in_threadpool(self.acks.history.response_times,
                                       _time_param(request, "start", now - 30 * 86400.0),
                                       _time_param(request, "end", now), by)
        return JSONResponse({"status": "success", "data": rows})

    async def oncall(self, request: Request) -> Response:
        t = _time_param(request, "time", self.clock.now())
        return JSONResponse({"time": t, "shifts": shifts(self.acks.config.oncall, t)})

    async def voice(self, request: Request) -> Response:
        try:
            body = await json_body(request)
        except InputError as exc:
            return JSONResponse({"result": 1, "errmsg": str(exc)}, status_code=400)
        took = await run_in_threadpool(self.acks.voice_callback, body)
        if took is None:
            return JSONResponse({"result": 1, "errmsg": "not a voiceprompt_callback"}, status_code=400)
        return JSONResponse({"result": 0, "errmsg": "OK"} if took else  # Tencent's documented answer
                            {"result": 1, "errmsg": "no such call is waiting for its status"})

    def _read(self, fn: Any) -> Any:
        async def guarded(request: Request) -> Response:
            try:
                return await fn(request)  # type: ignore[no-any-return]
            except InputError as exc:
                return JSONResponse({"error": str(exc)}, status_code=400)
        return guarded


def oncall_routes(acks: AcksHandle, token: Secret) -> list[Route]:
    """``OnCallApi``'s routes."""
    return OnCallApi(acks, token).routes()

