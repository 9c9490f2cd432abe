"""Prometheus 2.42's metadata endpoints: ``series``, ``labels``, ``label/<name>/values``, ``metadata``,
``targets/metadata`` and ``/federate``.

Selectors in ``match[]`` are PromQL series selectors; ``start``/``end``
(Unix or RFC 3339) narrow the series to those with samples in the range.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, cast

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from inferwatch.model import CATALOG, METRIC_NAME_LABEL, Labels, Matcher, MatchOp, is_valid_label_name
from inferwatch.promql import Engine, PromQLError, Selector, parse_promql
from inferwatch.server._runtime import Server
from inferwatch.server.api._prom_api import query_handler
from inferwatch.server.api._prom_params import ApiError, Params, format_api_float, read_params
from inferwatch.server.api._query_exec import BoundedStore, QueryContext, QueryExecutor
from inferwatch.store import Store

__all__ = ["PromMetaApi", "prom_meta_routes"]

_ANY_NAME = Matcher(METRIC_NAME_LABEL, MatchOp.RE, ".+")
_KIND = {"untyped": "unknown"}


def parse_match(raw: str) -> tuple[Matcher, ...]:
    """A ``match[]`` series selector's matchers (Prometheus's ``ParseMetricSelector``)."""
    try:
        e = parse_promql(raw)
    except PromQLError as exc:
        raise ApiError(f'invalid parameter "match[]": {exc}') from None
    if not isinstance(e, Selector) or e.range is not None or e.offset or e.at is not None:
        raise ApiError(f'invalid parameter "match[]": 1:1: parse error: expected a series selector, '
                       f"got {raw!r}")
    return e.matchers


def _series(store: Store, params: Params, *, required: bool) -> list[Labels]:
    matches = params.all("match[]")
    if not matches:
        if required:
            raise ApiError("no match[] parameter provided")
        matches_m: list[tuple[Matcher, ...]] = [(_ANY_NAME,)]
    else:
        matches_m = [parse_match(m) for m in matches]
    start, end = params.get("start"), params.get("end")
    out: dict[Labels, None] = {}
    for ms in matches_m:
        if start is None and end is None:
            found: Iterable[Labels] = store.series(ms)
        else:
            lo, hi = params.time("start", -9.2e12), params.time("end", 9.2e12)
            found = (s.labels for s in store.select(ms, lo, hi))
        out.update(dict.fromkeys(found))
    return sorted(out)


class PromMetaApi:
    """Prometheus's metadata endpoints and federation of a server: one method an endpoint."""

    def __init__(self, server: Server, executor: QueryExecutor | None = None) -> None:
        self.server = server
        self.executor = executor

    def routes(self) -> list[BaseRoute]:
        """Every endpoint of this API, registered here and nowhere else."""
        endpoints = [("/api/v1/series", self.series), ("/api/v1/labels", self.labels),
                     ("/api/v1/metadata", self.metadata),
                     ("/api/v1/targets/metadata", self.targets_metadata)]
        return [
            *(Route(path, query_handler(fn, self.executor), methods=["GET", "POST"])
              for path, fn in endpoints),
            Route("/api/v1/label/{name}/values", self.label_values, methods=["GET"]),
            Route("/federate", self.federate, methods=["GET", "POST"]),
        ]

    def _store(self, ctx: QueryContext | None = None) -> Store:
        s = self.server.components.store
        return s if ctx is None else cast(Store, BoundedStore(s, ctx))

    def series(self, params: Params, ctx: QueryContext | None) -> Any:
        return [ls.to_dict() for ls in _series(self._store(ctx), params, required=True)]

    def labels(self, params: Params, ctx: QueryContext | None) -> Any:
        names = {k for ls in _series(self._store(ctx), params, required=False) for k in ls}
        return sorted(names)

    def metadata(self, params: Params, ctx: QueryContext | None) -> Any:
        wanted = params.get("metric")
        limit = int(params.get("limit") or -1)
        present = set(self._store(ctx).label_values(METRIC_NAME_LABEL))
        out: dict[str, list[dict[str, str]]] = {}
        for spec in CATALOG.values():
            family = spec.name
            if wanted and family != wanted:
                continue
            if not any(n == family or n.startswith(family + "_") for n in present):
                continue
            if 0 <= limit <= len(out):
                break
            kind = _KIND.get(spec.kind.value, spec.kind.value)
            out[family] = [{"type": kind, "help": spec.help, "unit": spec.unit}]
        return out

    def targets_metadata(self, params: Params, ctx: QueryContext | None) -> Any:
        return []

    async def label_values(self, req: Request) -> Response:
        name = req.path_params["name"]

        def run(params: Params, ctx: QueryContext | None) -> Any:
            if not is_valid_label_name(name):
                raise ApiError(f'invalid label name: "{name}"')
            if not params.all("match[]") and params.get("start") is None and params.get("end") is None:
                return self._store(ctx).label_values(name)
            found = _series(self._store(ctx), params, required=False)
            return sorted({ls[name] for ls in found if name in ls})

        return await query_handler(run, self.executor)(req)

    async def federate(self, req: Request) -> Response:
        params = await read_params(req)
        try:
            matches = [parse_match(m) for m in params.all("match[]")]
        except ApiError as exc:
            return Response(f"{exc}\n", status_code=400, media_type="text/plain")
        now = self.server.clock.now()

        def render() -> str:  # off the event loop: a wide match[] reads many series
            engine = Engine(self._store())
            lines: list[str] = []
            seen: set[Labels] = set()
            for ms in matches:
                for ls, t, v in engine.latest(ms, now):
                    if ls not in seen:
                        seen.add(ls)
                        lines.append(_federate_line(ls, v, t))
            return _with_types(sorted(lines))

        body = await run_in_threadpool(render)
        return Response(body, media_type="text/plain; version=0.0.4; charset=utf-8")


def prom_meta_routes(server: Server, executor: QueryExecutor | None = None) -> list[BaseRoute]:
    """``PromMetaApi``'s routes."""
    return PromMetaApi(server, executor).routes()


def _federate_line(ls: Labels, v: float, t: float) -> str:
    inner = ",".join(f'{k}="{_esc(val)}"' for k, val in ls.items_tuple if k != METRIC_NAME_LABEL)
    value = format_api_float(v) if math.isfinite(v) or math.isnan(v) else ("+Inf" if v > 0 else "-Inf")
    return f"{ls.name}{{{inner}}} {value} {round(t * 1000)}"


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _with_types(lines: list[str]) -> str:
    out: list[str] = []
    last = ""
    for line in lines:
        name = line.split("{", 1)[0]
        if name != last:
            out.append(f"# TYPE {name} untyped")
            last = name
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")
