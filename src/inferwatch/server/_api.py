"""The HTTP API: health, targets, queries, series, rules, alerts; JSON shaped like Prometheus's.

Bad requests answer 400 with ``{"status": "error", "errorType": "bad_data",
"error": ...}``; nothing a client sends produces a 500.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from inferwatch._exceptions import InferwatchError, StoreError
from inferwatch.model import parse_duration
from inferwatch.rules import format_go_float
from inferwatch.server._guard import Guard
from inferwatch.server._openapi import OPENAPI_PATH, openapi_document
from inferwatch.server._prom_routes import prometheus_routes
from inferwatch.server._query_exec import (
    BoundedStore,
    QueryContext,
    QueryError,
    QueryExecutor,
    instant_query,
    range_query,
)
from inferwatch.server._runtime import Server
from inferwatch.server._selfmetrics import DeliveryCounts, self_registry
from inferwatch.store import parse_selector

__all__ = ["MAX_RANGE_POINTS", "create_app"]

log = logging.getLogger(__name__)
MAX_RANGE_POINTS = 11_000  # as Prometheus: more points per series is refused


class BadData(Exception):
    """A request parameter is wrong; answered with 400 bad_data."""


def _ok(data: Any) -> JSONResponse:
    return JSONResponse({"status": "success", "data": data})


def _bad(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": "bad_data", "error": message}, status_code=status)


def _time(req: Request, name: str, default: float | None) -> float:
    raw = req.query_params.get(name)
    if raw is None:
        if default is None:
            raise BadData(f"missing parameter {name!r}")
        return default
    try:
        t = float(raw)
    except ValueError:
        raise BadData(f"invalid parameter {name!r}: cannot parse {raw!r} to a valid timestamp") from None
    if not math.isfinite(t):
        raise BadData(f"invalid parameter {name!r}: {raw!r} is not finite")
    return t


def _step(raw: str | None) -> float:
    if raw is None:
        raise BadData("missing parameter 'step'")
    try:
        step = float(raw)
    except ValueError:
        try:
            step = parse_duration(raw)
        except ValueError:
            raise BadData(f"invalid parameter 'step': cannot parse {raw!r} to a duration") from None
    if not step > 0 or not math.isfinite(step):
        raise BadData("zero or negative query resolution step widths are not accepted")
    return step


def _handler(fn: Callable[[Request], Any], executor: QueryExecutor | None = None) -> Callable[[Request], Any]:
    """``fn`` answered as JSON; with ``executor``, ``fn(req)`` returns work that runs on its pool."""

    async def run(req: Request) -> Response:
        try:
            if executor is None:
                return _ok(fn(req))
            return _ok(await executor.run(fn(req)))
        except BadData as exc:
            return _bad(str(exc))
        except QueryError as exc:
            body = {"status": "error", "errorType": exc.error_type, "error": str(exc)}
            return JSONResponse(body, status_code=exc.status)
        except StoreError as exc:
            body = {"status": "error", "errorType": "internal", "error": str(exc)}
            return JSONResponse(body, status_code=503)
        except InferwatchError as exc:  # InputError and friends: the request was wrong
            return _bad(str(exc))
        except Exception:  # a bug, not the client's fault: logged, answered as JSON
            log.exception("%s failed", req.url.path)
            return JSONResponse({"status": "error", "errorType": "internal", "error": "internal error"},
                                status_code=500)

    return run


def create_app(server: Server, *, extra_routes: Sequence[BaseRoute] = (),
               deliveries: DeliveryCounts | None = None, executor: QueryExecutor | None = None) -> Starlette:
    """The Starlette app of ``server``; ``extra_routes`` are mounted alongside (alerting API).

    Queries, series and label look-ups run on ``executor`` (one with the
    config's ``server.query`` limits when not given; ``app.state.executor``).
    """
    executor = executor or QueryExecutor(server.config.server.query)
    Work = Callable[[QueryContext], Any]

    def query(req: Request) -> Work:
        t = _time(req, "time", server.clock.now())
        text, store = _param(req, "query"), server.components.store

        def work(ctx: QueryContext) -> Any:
            result = instant_query(store, ctx, text, t)
            if isinstance(result, float):
                return {"resultType": "scalar", "result": [t, format_go_float(result)]}
            return {"resultType": "vector", "result": [
                {"metric": labels.to_dict(), "value": [t, format_go_float(v)]} for labels, v in result
            ]}
        return work

    def query_range(req: Request) -> Work:
        start, end = _time(req, "start", None), _time(req, "end", None)
        step = _step(req.query_params.get("step"))
        if end < start:
            raise BadData("end timestamp must not be before start time")
        if (end - start) / step > MAX_RANGE_POINTS:
            raise BadData(f"exceeded maximum resolution of {MAX_RANGE_POINTS} points per timeseries")
        text, store = _param(req, "query"), server.components.store

        def work(ctx: QueryContext) -> Any:
            series = range_query(store, ctx, text, start, end, step)
            return {"resultType": "matrix", "result": [
                {"metric": dict(key), "values": [[t, format_go_float(v)] for t, v in vals]}
                for key, vals in sorted(series.items())
            ]}
        return work

    def series_(req: Request) -> Work:
        selectors = req.query_params.getlist("match[]")
        if not selectors:
            raise BadData("no match[] parameter provided")
        parsed = [parse_selector(sel) for sel in selectors]
        store = server.components.store

        def work(ctx: QueryContext) -> Any:
            out: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
            for matchers in parsed:
                for labels in BoundedStore(store, ctx).series(matchers):
                    out[labels.items_tuple] = labels.to_dict()
            return [out[k] for k in sorted(out)]
        return work

    def label_values(req: Request) -> Work:
        name, store = req.path_params["name"], server.components.store
        return lambda ctx: BoundedStore(store, ctx).label_values(name)

    def targets(_: Request) -> Any:
        return {"activeTargets": [
            {"labels": h.labels, "scrapePool": h.job, "scrapeUrl": h.url, "health": h.health,
             "lastError": h.last_error, "lastScrape": h.last_scrape, "lastScrapeDuration": h.last_duration,
             "scrapeInterval": h.interval, "scrapeTimeout": h.timeout, "samples": h.samples}
            for h in server.components.scrape.targets()
        ], "droppedTargets": []}

    def rules(_: Request) -> Any:
        comps = server.components
        active: dict[str, list[dict[str, Any]]] = {}
        for a in comps.evaluator.active():
            active.setdefault(a.alertname, []).append(_alert_json(a))
        return {"groups": [{"name": "inferwatch", "interval": comps.config.server.evaluation_interval,
                            "rules": [_rule_json(r, active.get(r.name, [])) for r in comps.rules]}]}

    def alerts(_: Request) -> Any:
        return {"alerts": [_alert_json(a) for a in server.components.evaluator.active()]}

    async def healthy(_: Request) -> Response:
        return Response("inferwatch is Healthy.\n", media_type="text/plain")

    async def ready(_: Request) -> Response:
        if server.ready.is_set():
            return Response("inferwatch is Ready.\n", media_type="text/plain")
        return Response("inferwatch is not ready.\n", status_code=503, media_type="text/plain")

    registry = self_registry(server, deliveries)

    def metrics(req: Request) -> Response:
        # The server's own metrics (evaluation, targets, alerts, storage, deliveries,
        # process): a scrape of the server itself reports up == 1 and what it does.
        from prometheus_client import generate_latest
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    async def openapi(_: Request) -> Response:
        return JSONResponse(openapi_document())

    async def not_found(req: Request, exc: Exception) -> Response:
        return _bad(f"no such endpoint: {req.url.path}", 404)

    pooled = [
        ("/api/v1/query", query), ("/api/v1/query_range", query_range), ("/api/v1/series", series_),
        ("/api/v1/label/{name}/values", label_values),
    ]
    api = [("/api/v1/targets", targets), ("/api/v1/rules", rules), ("/api/v1/alerts", alerts)]
    routes: list[BaseRoute] = [
        *prometheus_routes(server, deliveries, executor),  # Prometheus 2.42's API: listed first, so it wins
        Route("/-/healthy", healthy), Route("/-/ready", ready), Route("/metrics", metrics),
        Route(OPENAPI_PATH, openapi),
        *(Route(path, _handler(fn, executor), methods=["GET", "POST"]) for path, fn in pooled),
        *(Route(path, _handler(fn), methods=["GET", "POST"]) for path, fn in api),
        *extra_routes,
    ]
    guard = Middleware(Guard, limits=server.config.server.http)  # body size, JSON depth, clean 500s
    app = Starlette(routes=routes, exception_handlers={404: not_found}, middleware=[guard])
    app.state.executor = executor
    return app


def _param(req: Request, name: str) -> str:
    value = req.query_params.get(name)
    if not value:
        raise BadData(f"missing parameter {name!r}")
    return value


def _alert_json(a: Any) -> dict[str, Any]:
    out = {"labels": a.labels.to_dict(), "annotations": dict(a.annotations), "state": str(a.state),
           "activeAt": a.active_since, "value": format_go_float(a.value)}
    if a.held:  # inferwatch's addition to Prometheus's shape, only when it applies
        out["held"] = True
    return out


def _rule_json(r: Any, alerts: list[dict[str, Any]]) -> dict[str, Any]:
    state = "firing" if any(a["state"] == "firing" for a in alerts) else ("pending" if alerts else "inactive")
    return {"name": r.name, "type": "alerting", "query": r.promql, "duration": r.for_,
            "keepFiringFor": r.keep_firing_for, "labels": dict(r.alert_labels),
            "annotations": dict(r.annotations),
            "state": state, "alerts": alerts}
