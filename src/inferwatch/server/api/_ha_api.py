"""``/api/v1/ha``: an HA pair as this replica sees it (each replica, who leads, the lease's age, when
each was last seen, the database's state, the journal not yet written back); the dashboard's
Replicas page reads it. Without an ``ha`` section: ``{"enabled": false}``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.routing import Route

from inferwatch.server.api._prom_api import api_handler
from inferwatch.server.api._prom_params import Params

__all__ = ["ha_routes"]


def ha_routes(overview: Callable[[], dict[str, Any]] | None) -> list[Route]:
    """``GET /api/v1/ha`` (Prometheus's envelope: ``{"status": "success", "data": {...}}``)."""

    def ha(params: Params) -> Any:
        return {"enabled": False} if overview is None else overview()

    return [Route("/api/v1/ha", api_handler(ha), methods=["GET"])]
