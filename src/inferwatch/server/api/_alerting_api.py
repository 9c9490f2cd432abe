"""The alerting HTTP API: silences (Alertmanager API v2 shapes), the Alertmanager webhook,
notification and action records. Writes need ``Authorization: Bearer <token>``.

    GET    /api/v2/silences                 list (open), ``filter`` as Alertmanager's
    POST   /api/v2/silences                 create or update -> {"silenceID": ...} (Alertmanager's rules)
    GET    /api/v2/silence/{id}             one silence
    DELETE /api/v2/silence/{id}             expire now
    ...    /api/v2/status, receivers, alerts, alerts/groups   (``_am_api``)
    POST   /api/v1/alertmanager             a real Alertmanager's webhook (version 4)
    GET    /api/v1/notifications            recent deliveries and failures
    GET    /api/v1/actions                  action outcomes
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.alerting import PipelineHandles, Silence, parse_rfc3339, redact_ack_links, rfc3339
from inferwatch.config import Config, Secret, env
from inferwatch.model import Labels, Matcher, MatchOp, is_valid_label_name, loads_json, parse_matcher, shown
from inferwatch.rules import Alert
from inferwatch.server._reader import may, write_allowed
from inferwatch.server.api._am_api import am_error, am_routes
from inferwatch.store import DEFAULT_LIMITS, SeriesLimits

__all__ = ["API_TOKEN_FILE", "WEBHOOK_FIRING_HOLD_S", "AlertingApi", "alerting_routes", "json_body",
           "resolve_api_token", "write_guard"]

log = logging.getLogger(__name__)

# A firing alert from Alertmanager stays firing this long without news (Alertmanager
# re-posts at repeat_interval, 4 h by default, and posts the resolution).
WEBHOOK_FIRING_HOLD_S = 24 * 3600.0

Endpoint = Callable[[Request], Awaitable[Response]]
API_TOKEN_FILE = "api_token"


def resolve_api_token(config: Config, data_dir: Path, announce: Callable[[str], None]) -> Secret:
    """``$INFERWATCH_API_TOKEN``, else ``server.api_token``, else the one generated at first start.

    A generated token is kept in ``data_dir/api_token`` (mode 0600) and announced once.
    """
    from_env = os.environ.get(env.ENV_API_TOKEN)
    if from_env:
        return Secret(from_env)
    if config.server.api_token is not None:
        return config.server.api_token
    path = data_dir / API_TOKEN_FILE
    if path.is_file():
        return Secret(path.read_text().strip())
    token = secrets.token_urlsafe(24)
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    announce(f"generated an API token for writes (shown once, kept in {path}): {token}")
    return Secret(token)


def _error(status: int, msg: str) -> JSONResponse:
    return JSONResponse({"error": msg}, status_code=status)


def _write(token: Secret, fn: Endpoint, error: Callable[[int, str], Response] = _error) -> Endpoint:
    async def guarded(request: Request) -> Response:
        if not write_allowed(request, token):  # in the route's shape: amtool prints Alertmanager's string
            return error(401, "writes need 'Authorization: Bearer <token>' (server.api_token, else the data "
                         "directory's api_token file)")
        try:
            return await fn(request)
        except InputError as exc:
            return error(400, str(exc))
    return guarded


def write_guard(token: Secret, fn: Endpoint) -> Endpoint:
    """``fn`` behind the bearer token, with ``InputError`` answered 400 (other APIs' writes)."""
    return _write(token, fn)


async def json_body(request: Request) -> Any:
    """The request's JSON body, every string in it checked as text (``InputError`` naming the field)."""
    return loads_json(await request.body())


_STATE_ORDER = {"active": 0, "pending": 1, "expired": 2}


def sorted_silences(silences: list[Silence], now: float) -> list[Silence]:
    """Alertmanager's ``SortSilences``: active by end, pending by start, expired most recent first."""
    def key(s: Silence) -> tuple[int, float]:
        state = s.state(now)
        return _STATE_ORDER[state], {"active": s.ends_at, "pending": s.starts_at}.get(state, -s.ends_at)
    return sorted(silences, key=key)


def silence_filter_matches(s: Silence, filters: list[Matcher]) -> bool:
    """Alertmanager's ``CheckSilenceMatchesFilterLabels``: each filter is one of the silence's matchers."""
    return all(any((m.name, m.op, m.value) == (f.name, f.op, f.value) for m in s.matchers) for f in filters)


def silence_json(s: Silence, now: float) -> dict[str, Any]:
    """A silence in Alertmanager's API v2 shape."""
    return {
        "id": s.id, "status": {"state": s.state(now)}, "updatedAt": rfc3339(s.updated_at),
        "matchers": [{"name": m.name, "value": m.value, "isRegex": m.op in (MatchOp.RE, MatchOp.NRE),
                      "isEqual": m.op in (MatchOp.EQ, MatchOp.RE)} for m in s.matchers],
        "startsAt": rfc3339(s.starts_at), "endsAt": rfc3339(s.ends_at),
        "createdBy": s.created_by, "comment": s.comment,
    }


def _time(body: dict[str, Any], key: str, default: float | None) -> float:
    raw = body.get(key)
    if raw is None:
        if default is None:
            raise InputError(f"silence {key}: required")
        return default
    try:
        t = parse_rfc3339(str(raw))
    except ValueError:
        raise InputError(f"silence {key}: not an RFC 3339 time: {shown(str(raw))}") from None
    if t is None:
        raise InputError(f"silence {key}: the zero time is not allowed")
    return t


def _matcher(m: Any) -> Matcher:
    if not isinstance(m, dict) or not isinstance(m.get("name"), str) or not isinstance(m.get("value"), str):
        raise InputError(f"silence matchers: each needs string 'name' and 'value', got {m!r}")
    regex, equal = bool(m.get("isRegex", False)), bool(m.get("isEqual", True))
    op = {(False, True): MatchOp.EQ, (False, False): MatchOp.NE,
          (True, True): MatchOp.RE, (True, False): MatchOp.NRE}[(regex, equal)]
    try:
        return Matcher(m["name"], op, m["value"])
    except ValueError as exc:
        raise InputError(f"silence matchers: {exc}") from None


def parse_silence(body: Any, now: float) -> Silence:
    """A silence from an API v2 body (``InputError`` naming the field)."""
    if not isinstance(body, dict):
        raise InputError("silence: expected a JSON object")
    if not isinstance(body.get("matchers"), list):
        raise InputError("silence matchers: expected a list")
    matchers = [_matcher(m) for m in body["matchers"]]
    return Silence.new(matchers, _time(body, "startsAt", now), _time(body, "endsAt", None),
                       str(body.get("createdBy", "")), str(body.get("comment", "")),
                       str(body.get("id") or ""))


def parse_webhook(body: Any, now: float, limits: SeriesLimits = DEFAULT_LIMITS) -> list[Alert]:
    """Alerts from Alertmanager's webhook JSON (version 4); labels over ``limits`` refuse it whole."""
    if not isinstance(body, dict) or not isinstance(body.get("alerts"), list):
        raise InputError("webhook: expected Alertmanager's JSON with an 'alerts' list")
    if str(body.get("version", "4")) != "4":
        raise InputError(f"webhook: version {body.get('version')!r} is not supported (expected \"4\")")
    out = []
    for i, a in enumerate(body["alerts"]):
        try:
            labels = Labels({str(k): str(v) for k, v in a["labels"].items()})
            bad = next((k for k in labels if not is_valid_label_name(k)), None)
            if bad is not None:
                raise InputError(f"webhook: alerts[{i}].labels: invalid label name {bad!r}")
            limits.check_labels(labels, f"webhook: alerts[{i}].labels")
            starts = parse_rfc3339(str(a.get("startsAt", ""))) or now
            ends = parse_rfc3339(str(a.get("endsAt", "")))
            if a.get("status") == "resolved":
                ends = ends if ends is not None else now
            else:
                ends = now + WEBHOOK_FIRING_HOLD_S
            ann = {str(k): str(v) for k, v in (a.get("annotations") or {}).items()}
            out.append(Alert(labels, ann, starts, ends, float("nan"), str(a.get("generatorURL", ""))))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise InputError(f"webhook: alerts[{i}] is malformed ({exc!r})") from None
    return out


class AlertingApi:
    """Alertmanager v2 silences and alerts, the webhook in, notifications, actions: one method an endpoint."""

    def __init__(self, handles: PipelineHandles, token: Secret,
                 limits: SeriesLimits = DEFAULT_LIMITS) -> None:
        self.handles = handles
        self.token = token
        self.limits = limits
        self.silences, self.alerting = self.handles.silences, self.handles.alerts
        self.clock = self.silences.clock

    def routes(self) -> list[Route]:
        """Every endpoint of this API, registered here and nowhere else."""
        return [
            *am_routes(self.alerting, self._am_write, json_body, self.limits),
            Route("/api/v2/silences", self.list_silences, methods=["GET"]),
            Route("/api/v2/silences", self._am_write(self.post_silence), methods=["POST"]),
            Route("/api/v2/silence/{id}", self.get_silence, methods=["GET"]),
            Route("/api/v2/silence/{id}", self._am_write(self.delete_silence), methods=["DELETE"]),
            Route("/api/v1/alertmanager", _write(self.token, self.webhook), methods=["POST"]),
            Route("/api/v1/notifications", self.notifications, methods=["GET"]),
            Route("/api/v1/actions", self.actions, methods=["GET"]),
        ]

    def _am_write(self, fn: Endpoint) -> Endpoint:  # errors of the API v2 routes in Alertmanager's shape
        return _write(self.token, fn, am_error)

    async def list_silences(self, request: Request) -> Response:
        now = self.clock.now()
        try:
            filters = [parse_matcher(t) for t in request.query_params.getlist("filter")]
        except ValueError as exc:
            return am_error(400, f"filter: {exc}")
        kept = [s for s in self.silences.list() if silence_filter_matches(s, filters)]
        return JSONResponse([silence_json(s, now) for s in sorted_silences(kept, now)])

    async def get_silence(self, request: Request) -> Response:
        s = self.silences.get(request.path_params["id"])
        if s is None:
            return am_error(404, f"no silence with id {request.path_params['id'][:64]!r}")
        return JSONResponse(silence_json(s, self.clock.now()))

    async def post_silence(self, request: Request) -> Response:
        now = self.clock.now()
        body = await json_body(request)
        s = parse_silence(body, now)
        if s.ends_at < now:
            raise InputError("silence endsAt: Failed to create silence: end time can't be in the past")
        if body.get("id") and self.silences.get(s.id) is None:  # Alertmanager: ErrNotFound
            return am_error(404, f"silence {s.id[:64]!r} not found")
        stored = await run_in_threadpool(self.silences.set, s, now)
        return JSONResponse({"silenceID": stored.id})

    async def delete_silence(self, request: Request) -> Response:
        sid = request.path_params["id"]
        if self.silences.get(sid) is None:
            return am_error(404, f"no silence with id {sid!r}")
        await run_in_threadpool(self.silences.expire, sid, self.clock.now())
        return JSONResponse({"silenceID": sid, "status": "expired"})

    async def webhook(self, request: Request) -> Response:
        now = self.clock.now()
        alerts = parse_webhook(await json_body(request), now, self.limits)
        await run_in_threadpool(self.alerting.send, alerts, now)
        return JSONResponse({"status": "success", "alerts": len(alerts)})

    async def notifications(self, request: Request) -> Response:
        out = [r.to_json() for r in self.alerting.notifications()]
        if not may(request, "responder", self.token):  # acknowledgement links are credentials: for responders
            out = [{**o, "notes": redact_ack_links(o["notes"])} for o in out]
        return JSONResponse(out)

    async def actions(self, request: Request) -> Response:
        return JSONResponse([r.to_json() for r in self.alerting.action_records()])


def alerting_routes(handles: PipelineHandles, token: Secret,
                    limits: SeriesLimits = DEFAULT_LIMITS) -> list[Route]:
    """``AlertingApi``'s routes."""
    return AlertingApi(handles, token, limits).routes()
