"""``/api/v1/probes``: each probe's last run (success, phases, status, answer), its last failure's
reason, and a golden set's answers and wrong share (the dashboard's Probes page reads it)."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from starlette.routing import Route

from inferwatch.server.api._prom_api import api_handler
from inferwatch.server.api._prom_params import Params

if TYPE_CHECKING:
    from inferwatch.server._runtime import Server

__all__ = ["probe_routes"]


def probe_routes(server: Server) -> list[Route]:
    """``GET /api/v1/probes`` (Prometheus's envelope: ``{"status": "success", "data": [...]}``)."""

    def probes(params: Params) -> Any:
        prober = server.components.probes  # read per request: a reload swaps them
        return [] if prober is None else [asdict(p) for p in prober.probes()]

    return [Route("/api/v1/probes", api_handler(probes), methods=["GET"])]
