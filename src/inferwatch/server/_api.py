"""The HTTP app: health, readiness, the server's own metrics, and every API mounted on it.

The Prometheus API (queries, metadata, targets, rules, alerts, status,
federation) is ``_prom_routes``'s, run on the bounded query executor; the
alerting, ingest, trace and dashboard routes come in as ``extra_routes``.
Bad requests answer 400 JSON; nothing a client sends produces a 500.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import cast

from prometheus_client.registry import Collector
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from inferwatch.edge import INGEST_PATH
from inferwatch.server._guard import Guard
from inferwatch.server._runtime import Server
from inferwatch.server._selfmetrics import DeliveryCounts, self_registry
from inferwatch.server.access import Access, AccessGate, access_routes
from inferwatch.server.api import (
    OPENAPI_PATH,
    QueryExecutor,
    openapi_document,
    prometheus_routes,
    query_executor,
)

__all__ = ["create_app"]

log = logging.getLogger(__name__)


def create_app(server: Server, *, extra_routes: Sequence[BaseRoute] = (),
               deliveries: DeliveryCounts | None = None, executor: QueryExecutor | None = None,
               access: Access | None = None) -> Starlette:
    """The Starlette app of ``server``; ``extra_routes`` are mounted alongside (alerting API).

    With ``access`` (``serve``, the demo) every request passes the access gate, the one place
    that decides who may do what, and the sign-in routes are mounted; without it (the routes
    alone, in tests) each write checks the bearer token itself.

    Queries, series and label look-ups run on ``executor`` (one with the
    config's ``server.query`` limits when not given; ``app.state.executor``).
    """
    executor = executor or query_executor(server.config.server.query, server.priority)

    async def healthy(_: Request) -> Response:
        return Response("inferwatch is Healthy.\n", media_type="text/plain")

    async def ready(_: Request) -> Response:
        if server.ready.is_set():
            return Response("inferwatch is Ready.\n", media_type="text/plain")
        return Response("inferwatch is not ready.\n", status_code=503, media_type="text/plain")

    registry = self_registry(server, deliveries)
    if executor.forks is not None:  # inferwatch_query_forks_total and the rest: a collector
        registry.register(cast(Collector, executor.forks))
        registry.register(cast(Collector, executor))  # inferwatch_query_on_event_loop_total

    def metrics(req: Request) -> Response:
        # The server's own metrics (evaluation, targets, alerts, storage, deliveries,
        # process): a scrape of the server itself reports up == 1 and what it does.
        from prometheus_client import generate_latest
        from prometheus_client.exposition import CONTENT_TYPE_LATEST

        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    async def openapi(_: Request) -> Response:
        return JSONResponse(openapi_document())

    async def not_found(req: Request, exc: Exception) -> Response:
        return JSONResponse({"status": "error", "errorType": "bad_data",
                             "error": f"no such endpoint: {req.url.path}"}, status_code=404)

    routes: list[BaseRoute] = [
        *prometheus_routes(server, deliveries, executor),  # Prometheus 2.42's API
        Route("/-/healthy", healthy), Route("/-/ready", ready), Route("/metrics", metrics),
        Route(OPENAPI_PATH, openapi),
        *extra_routes,
        *(access_routes(access) if access is not None else []),
    ]
    guard = Middleware(Guard, limits=server.config.server.http,  # body size, JSON depth, clean 500s
                       paths={INGEST_PATH: server.config.edge.max_body_bytes})
    # the gate inside the guard: bodies are bounded before anyone is asked who they are
    gate = [Middleware(AccessGate, access=access)] if access is not None else []
    app = Starlette(routes=routes, exception_handlers={404: not_found}, middleware=[guard, *gate])
    app.state.executor = executor
    return app
