"""``/api/v1/heartbeats``: this server as another's dead man's switch (``heartbeats:`` in the config).

    POST /api/v1/heartbeats/{name}   a heartbeat: any body (curl -X POST, a healthchecks-style ping),
                                     or Alertmanager's webhook JSON, which counts only while it
                                     carries a firing ``Watchdog`` (a write: the bearer token)
    GET  /api/v1/heartbeats          each heartbeat: received, last received, missing

The write token is needed as for every write: Alertmanager's ``webhook_configs`` sends it
with ``http_config.authorization.credentials``, inferwatch's sender with ``alerting.heartbeat.key``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.alerting.deadman import WATCHDOG, HeartbeatWatch
from inferwatch.config import Secret
from inferwatch.model import loads_json
from inferwatch.server.api._alerting_api import write_guard

__all__ = ["carries_watchdog", "heartbeat_routes"]


def carries_watchdog(body: bytes) -> bool:
    """Whether a POST counts as a heartbeat: any non-JSON body does; Alertmanager's webhook JSON
    only with a firing ``Watchdog`` (a resolved one, or other alerts alone, say nothing of life)."""
    text = body.strip()
    if not text.startswith(b"{"):
        return True
    try:
        doc = loads_json(text)
    except InputError:
        return True  # not JSON after all: a ping with a body
    if not isinstance(doc, dict) or "alerts" not in doc:
        return True
    alerts = doc["alerts"]
    if not isinstance(alerts, list):
        raise InputError("heartbeat: 'alerts' is not a list (expected Alertmanager's webhook JSON)")
    return any(isinstance(a, dict) and isinstance(a.get("labels"), dict)
               and a["labels"].get("alertname") == WATCHDOG and a.get("status", "firing") == "firing"
               for a in alerts)


def heartbeat_routes(watch: HeartbeatWatch, token: Secret) -> list[Route]:
    """The heartbeat endpoints over ``watch`` (the POST behind ``token``)."""

    async def beat(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in watch.states:
            known = ", ".join(sorted(watch.states)) or "none (add `heartbeats:` to the config)"
            return JSONResponse({"error": f"no heartbeat named {name!r} is configured; configured: {known}"},
                                status_code=404)
        if not carries_watchdog(await request.body()):
            return JSONResponse({"status": "ignored", "reason": f"no firing {WATCHDOG} alert in the webhook"})
        watch.beat(name, watch.clock.now())
        return JSONResponse({"status": "ok"})

    async def states(request: Request) -> Response:
        now = watch.clock.now()
        data: list[dict[str, Any]] = [st.as_json(now) for st in watch.states.values()]
        return JSONResponse({"status": "success", "data": data})

    return [Route("/api/v1/heartbeats/{name}", write_guard(token, beat), methods=["POST"]),
            Route("/api/v1/heartbeats", states, methods=["GET"])]
