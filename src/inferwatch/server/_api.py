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
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from inferwatch._exceptions import InferwatchError, StoreError
from inferwatch.model import parse_duration
from inferwatch.rules import EvalError, PromQLError, QueryEngine, format_go_float, parse_promql
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


def _query_at(server: Server, text: str, t: float) -> Any:
    try:
        expr = parse_promql(text)
    except PromQLError as exc:
        raise BadData(f"invalid parameter 'query': {exc}") from None
    try:
        return QueryEngine(server.components.store).instant(expr, t)
    except EvalError as exc:
        raise BadData(f"cannot evaluate {text!r}: {exc}") from None


def _handler(fn: Callable[[Request], Any]) -> Callable[[Request], Any]:
    async def run(req: Request) -> Response:
        try:
            return _ok(fn(req))
        except BadData as exc:
            return _bad(str(exc))
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
               deliveries: DeliveryCounts | None = None) -> Starlette:
    """The Starlette app of ``server``; ``extra_routes`` are mounted alongside (alerting API)."""

    def query(req: Request) -> Any:
        t = _time(req, "time", server.clock.now())
        result = _query_at(server, _param(req, "query"), t)
        if isinstance(result, float):
            return {"resultType": "scalar", "result": [t, format_go_float(result)]}
        return {"resultType": "vector", "result": [
            {"metric": labels.to_dict(), "value": [t, format_go_float(v)]} for labels, v in result
        ]}

    def query_range(req: Request) -> Any:
        start, end = _time(req, "start", None), _time(req, "end", None)
        step = _step(req.query_params.get("step"))
        if end < start:
            raise BadData("end timestamp must not be before start time")
        if (end - start) / step > MAX_RANGE_POINTS:
            raise BadData(f"exceeded maximum resolution of {MAX_RANGE_POINTS} points per timeseries")
        text = _param(req, "query")
        series: dict[tuple[tuple[str, str], ...], list[list[Any]]] = {}
        k = 0
        while start + k * step <= end:
            t = start + k * step
            result = _query_at(server, text, t)
            if isinstance(result, float):
                points: list[tuple[tuple[tuple[str, str], ...], float]] = [((), result)]
            else:
                points = [(ls.items_tuple, v) for ls, v in result]
            for key, v in points:
                series.setdefault(key, []).append([t, format_go_float(v)])
            k += 1
        return {"resultType": "matrix", "result": [
            {"metric": dict(key), "values": vals} for key, vals in sorted(series.items())
        ]}

    def series_(req: Request) -> Any:
        selectors = req.query_params.getlist("match[]")
        if not selectors:
            raise BadData("no match[] parameter provided")
        out: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        for sel in selectors:
            for labels in server.components.store.series(parse_selector(sel)):
                out[labels.items_tuple] = labels.to_dict()
        return [out[k] for k in sorted(out)]

    def label_values(req: Request) -> Any:
        return server.components.store.label_values(req.path_params["name"])

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
                            "rules": [_rule_json(r, active.get(r.name, []),
                                                 comps.evaluator.band_status(r.name))
                                      for r in comps.rules]}]}

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

    async def not_found(req: Request, exc: Exception) -> Response:
        return _bad(f"no such endpoint: {req.url.path}", 404)

    api = [
        ("/api/v1/query", query), ("/api/v1/query_range", query_range), ("/api/v1/series", series_),
        ("/api/v1/label/{name}/values", label_values), ("/api/v1/targets", targets),
        ("/api/v1/rules", rules), ("/api/v1/alerts", alerts),
    ]
    routes: list[BaseRoute] = [
        Route("/-/healthy", healthy), Route("/-/ready", ready), Route("/metrics", metrics),
        *(Route(path, _handler(fn), methods=["GET", "POST"]) for path, fn in api),
        *extra_routes,
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found})


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


def _rule_json(r: Any, alerts: list[dict[str, Any]],
               bands: dict[str, bool] | None = None) -> dict[str, Any]:
    state = "firing" if any(a["state"] == "firing" for a in alerts) else ("pending" if alerts else "inactive")
    out = {"name": r.name, "type": "alerting", "query": r.promql, "duration": r.for_,
           "keepFiringFor": r.keep_firing_for, "labels": dict(r.alert_labels),
           "annotations": dict(r.annotations),
           "state": state, "alerts": alerts}
    # inferwatch's addition: a dynamic rule's series and whether each band is learned yet
    # (until it is, the rule's static fallback decides)
    out["dynamic"] = r.dynamic is not None
    if r.dynamic is not None:
        out["bands"] = [{"series": k, "learned": v} for k, v in sorted((bands or {}).items())]
    return out
