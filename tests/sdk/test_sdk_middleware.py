"""ASGI and WSGI wrappers record route, status and duration of each request."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any
from wsgiref.util import setup_testing_defaults

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from inferwatch.model import SimulatedClock
from inferwatch.sdk import Monitor

SVC = {"service": "svc", "model": "m", "version": "v1"}


def count(monitor: Monitor, route: str, code: str) -> float | None:
    return monitor.get_sample_value("inferwatch_requests_total", {**SVC, "route": route, "code": code})


def starlette_app(clock: SimulatedClock) -> Starlette:
    async def item(request: Request) -> JSONResponse:
        clock.advance(0.25)
        return JSONResponse({"id": request.path_params["id"]})

    async def boom(request: Request) -> PlainTextResponse:
        raise RuntimeError("model crashed")

    async def busy(request: Request) -> PlainTextResponse:
        return PlainTextResponse("busy", status_code=503)

    return Starlette(routes=[Route("/items/{id}", item), Route("/boom", boom), Route("/busy", busy)])


def test_asgi_records_route_template_status_and_duration() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("svc", "m", "v1", clock=clock) as monitor:
        client = TestClient(monitor.asgi(starlette_app(clock)), raise_server_exceptions=False)
        assert client.get("/items/1").status_code == 200
        assert client.get("/items/2").status_code == 200
        assert client.get("/busy").status_code == 503
        assert client.get("/boom").status_code == 500
        assert client.get("/nowhere").status_code == 404
        assert count(monitor, "/items/{id}", "200") == 2.0  # one series per template, not per id
        assert count(monitor, "/busy", "503") == 1.0
        assert count(monitor, "/boom", "500") == 1.0
        assert count(monitor, "/nowhere", "404") == 1.0
        labels = {**SVC, "route": "/items/{id}"}
        seconds = monitor.get_sample_value("inferwatch_request_duration_seconds_sum", labels)
        assert seconds == pytest.approx(0.5)
        assert monitor.get_sample_value("inferwatch_inflight_requests", SVC) == 0.0


def test_asgi_route_callback_and_reraise() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("svc", "m", "v1", clock=clock) as monitor:
        app = monitor.asgi(starlette_app(clock), route=lambda scope: "all")
        with pytest.raises(RuntimeError, match="model crashed"):
            TestClient(app).get("/boom")
        assert count(monitor, "all", "500") == 1.0


def test_metrics_and_health_routes_are_not_traffic_by_default() -> None:
    # rule: a scrape or a probe is not a request of the service (it would dilute the 503 ratio and
    # hide a stop of the traffic); exclude=() records them, a custom exclude replaces the default
    clock = SimulatedClock(0.0)
    with Monitor("svc", "m", "v1", clock=clock) as monitor:
        routes = [Route(p, lambda r: PlainTextResponse("ok")) for p in ("/metrics", "/healthz", "/status")]
        apps = {"default": monitor.asgi(Starlette(routes=routes), route=lambda s: "default" + s["path"]),
                "all": monitor.asgi(Starlette(routes=routes), route=lambda s: "all" + s["path"], exclude=()),
                "own": monitor.asgi(Starlette(routes=routes), route=lambda s: "own" + s["path"],
                                    exclude=["/status"])}
        for app in apps.values():
            client = TestClient(app)
            for path in ("/metrics", "/healthz", "/status"):
                assert client.get(path).status_code == 200
        recorded = {r + p for r in ("default", "all", "own") for p in ("/metrics", "/healthz", "/status")
                    if count(monitor, r + p, "200")}
        assert recorded == {"default/status", "all/metrics", "all/healthz", "all/status", "own/metrics",
                            "own/healthz"}
        wsgi = monitor.wsgi(wsgi_app, route=lambda e: "wsgi" + e["PATH_INFO"])
        environ: dict[str, Any] = {"PATH_INFO": "/metrics"}
        setup_testing_defaults(environ)
        assert b"".join(wsgi(environ, lambda *a: None)) == b"ok"  # passed through untouched
        assert call_wsgi(wsgi, "/ok")[0] == "200 OK"
        assert count(monitor, "wsgi/metrics", "200") is None
        assert count(monitor, "wsgi/ok", "200") == 1.0


def wsgi_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    path = environ["PATH_INFO"]
    if path == "/raise":
        raise ValueError("bad")
    status = "503 Service Unavailable" if path == "/busy" else "200 OK"
    start_response(status, [("content-type", "text/plain")])
    return [b"ok"]


def call_wsgi(app: Callable[..., Iterable[bytes]], path: str) -> tuple[str, bytes]:
    environ: dict[str, Any] = {"PATH_INFO": path}
    setup_testing_defaults(environ)
    seen: list[str] = []
    body = app(environ, lambda status, headers, exc_info=None: seen.append(status))
    try:
        data = b"".join(body)
    finally:
        body.close()  # type: ignore[attr-defined]  # PEP 3333: servers close the iterable
    return seen[0], data


def test_wsgi_records_status_and_duration() -> None:
    clock = SimulatedClock(0.0)
    with Monitor("svc", "m", "v1", clock=clock) as monitor:
        app = monitor.wsgi(wsgi_app)
        assert call_wsgi(app, "/predict") == ("200 OK", b"ok")
        assert call_wsgi(app, "/busy")[0].startswith("503")
        with pytest.raises(ValueError, match="bad"):
            call_wsgi(app, "/raise")
        assert count(monitor, "/predict", "200") == 1.0
        assert count(monitor, "/busy", "503") == 1.0
        assert count(monitor, "/raise", "500") == 1.0
        assert monitor.get_sample_value("inferwatch_inflight_requests", SVC) == 0.0
        labels = {**SVC, "route": "/predict"}
        assert monitor.get_sample_value("inferwatch_request_duration_seconds_count", labels) == 1.0
