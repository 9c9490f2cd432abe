"""``GET /api/v1/generations/worst``: the lowest-scored recent generations (the CLI and the dashboard
read it).

Parameters: ``score`` (the score's name, default ``judge``), ``since`` (a duration back
from now, ``1h``, or a Unix time; default ``1h``), ``limit`` (1-1,000, default 20) and
the filters ``route``, ``service``, ``model``. The answer, in Prometheus's envelope:
``{"score", "since", "generations": [{generation_id, time, score, name, service, route,
model, version, prompt_version, tenant, trace_id, trace_url}]}``, lowest score first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from starlette.routing import Route

from inferwatch._exceptions import ConfigError
from inferwatch.model import Clock, parse_duration
from inferwatch.server.api._prom_api import api_handler
from inferwatch.server.api._prom_params import ApiError, Params

__all__ = ["MAX_LIMIT", "WorstScored", "generation_routes", "worst_params"]

MAX_LIMIT = 1000


class WorstScored(Protocol):
    """What the route reads: the server's scored generations (``GenerationLog.worst``)."""

    def __call__(self, name: str, *, since: float, limit: int = 20, route: str = "", service: str = "",
                 model: str = "") -> Sequence[Any]: ...


def worst_params(params: Params, now: float) -> dict[str, Any]:
    """The query's arguments from the request (``ApiError`` naming the bad one)."""
    name = params.get("score") or "judge"
    raw_since = params.get("since") or "1h"
    try:
        since = float(raw_since)
    except ValueError:
        try:
            since = now - parse_duration(raw_since)
        except (ConfigError, ValueError):
            raise ApiError(f'invalid parameter "since": {raw_since!r} is neither a duration (1h) '
                           "nor a Unix time") from None
    raw_limit = params.get("limit") or "20"
    if not raw_limit.isdigit() or not 1 <= int(raw_limit) <= MAX_LIMIT:
        raise ApiError(f'invalid parameter "limit": {raw_limit!r} is not an integer from 1 to {MAX_LIMIT}')
    filters = {k: params.get(k) or "" for k in ("route", "service", "model")}
    return {"name": name, "since": since, "limit": int(raw_limit), **filters}


def generation_routes(worst: WorstScored, clock: Clock, base_url: Callable[[], str]) -> list[Route]:
    """``GET /api/v1/generations/worst`` over ``worst``; trace links start at ``base_url()``."""

    def handler(params: Params) -> Any:
        args = worst_params(params, clock.now())
        name = args.pop("name")
        found = worst(name, **args)
        return {"score": name, "since": args["since"], "generations": [g.to_json(base_url()) for g in found]}

    return [Route("/api/v1/generations/worst", api_handler(handler, threaded=True), methods=["GET"])]
