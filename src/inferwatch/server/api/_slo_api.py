"""``/api/v1/slos``: each SLO's objective, SLI now, budget left over the period, burn per window, alerts."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.routing import Route

from inferwatch.server.api._prom_api import api_handler
from inferwatch.server.api._prom_params import Params
from inferwatch.slo import slo_status

if TYPE_CHECKING:
    from inferwatch.server._runtime import Server

__all__ = ["slo_routes"]


def slo_routes(server: Server) -> list[Route]:
    """``GET /api/v1/slos`` (Prometheus's envelope; ``?time=`` evaluates at another instant)."""

    def slos(params: Params) -> Any:
        comps = server.components  # read per request: a reload swaps them
        t = params.time("time", server.clock.now())
        alerts = [{"labels": a.labels.to_dict(), "state": str(a.state), "activeAt": a.active_since,
                   "alertname": a.alertname} for a in comps.evaluator.active()]
        return slo_status(comps.slos, comps.store, t, alerts)

    return [Route("/api/v1/slos", api_handler(slos, threaded=True), methods=["GET"])]
