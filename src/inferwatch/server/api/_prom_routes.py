"""Every Prometheus-compatible route of the server, in one list for ``create_app``."""

from __future__ import annotations

from starlette.routing import BaseRoute

from inferwatch.server._runtime import Server
from inferwatch.server._selfmetrics import DeliveryCounts
from inferwatch.server.api._prom_api import prom_query_routes
from inferwatch.server.api._prom_meta import prom_meta_routes
from inferwatch.server.api._prom_status import prom_status_routes
from inferwatch.server.api._query_exec import QueryExecutor

__all__ = ["prometheus_routes"]


def prometheus_routes(server: Server, deliveries: DeliveryCounts | None = None,
                      executor: QueryExecutor | None = None) -> list[BaseRoute]:
    """Query, metadata, status and federation endpoints as Prometheus 2.42 serves them.

    With ``executor``, queries run on its bounded pool under its timeout and sample limit.
    """
    return [*prom_query_routes(server, executor), *prom_meta_routes(server, executor),
            *prom_status_routes(server)]
