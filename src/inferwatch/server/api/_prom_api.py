"""Prometheus 2.42's query endpoints: ``query``, ``query_range``, ``format_query``, ``query_exemplars``.

GET or POST form; results shaped as Prometheus's JSON (values as strings in
Go's 'f' format, times as seconds). Parse errors answer 400 ``bad_data``
with Prometheus's ``line:col`` message, evaluation errors 422
``execution``, a timeout 503 ``timeout``: never a 500. Queries run on a
worker thread, not the event loop.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any, TypeVar

from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from inferwatch._exceptions import StoreError
from inferwatch.model import Labels
from inferwatch.promql import (
    MAX_RANGE_POINTS,
    Engine,
    EvalError,
    Expr,
    Matrix,
    PromQLError,
    QueryTimeout,
    ValueType,
    parse_typed,
)
from inferwatch.server._runtime import Server
from inferwatch.server.api._prom_params import (
    ApiError,
    Params,
    format_api_float,
    format_api_time,
    read_params,
)
from inferwatch.server.api._query_exec import BoundedStore, Forks, QueryContext, QueryError, QueryExecutor
from inferwatch.server.api._query_fork import Relayed
from inferwatch.server.api._query_small import MAX_POINTS, run_if_small

__all__ = ["DEFAULT_QUERY_TIMEOUT_S", "PromQueryApi", "api_handler", "prom_query_routes", "query_handler"]

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_QUERY_TIMEOUT_S = 120.0

Handler = Callable[[Params], Any]
QueryHandler = Callable[[Params, QueryContext | None], Any]
Planned = tuple[Any, float, Params]  # a heavy query's store, earliest read and the parameters it runs with
Plan = Callable[[Params], Planned | None]
Small = Callable[[Params, Callable[[], "Encoded"]], "Encoded | None"]  # ``compute()`` on the loop, or None


After = list[Callable[[], None]]  # what to do once the answer is sent


class Encoded(bytes):
    """An answer's JSON envelope, encoded on the query's worker (not on the event loop)."""


def api_handler(fn: Handler, *, threaded: bool = False) -> Callable[[Request], Awaitable[Response]]:
    """Wrap ``fn(params) -> data`` into an endpoint answering Prometheus's envelope."""

    async def call(params: Params, after: After) -> Any:
        return await run_in_threadpool(fn, params) if threaded else fn(params)

    return _endpoint(call)


def query_handler(
    fn: QueryHandler, executor: QueryExecutor | None, plan: Plan | None = None, small: Small | None = None,
) -> Callable[[Request], Awaitable[Response]]:
    """Wrap a query ``fn(params, ctx)``: on ``executor``'s bounded pool (its timeout, sample limit and
    cancellation) when given, else on a worker thread with only the request's timeout. The answer is
    encoded on the worker, and the query counts as short (longer ones make way) until it is sent.

    With ``plan`` and an executor that forks (``server.query.isolation``), a query ``plan(params)`` finds
    heavy is evaluated in a child process (``QueryForks``): ``plan`` answers the store and the earliest
    time the query reads, or ``None`` to run it on the worker; and with ``small`` a query small enough
    (``_query_small``) is evaluated on the event loop itself: ``small(params, compute)`` answers
    ``compute()`` or ``None`` to run it on a worker. (``isolation: thread`` keeps every query on a
    worker thread.)"""

    async def call(params: Params, after: After) -> Any:
        if executor is None:
            return await run_in_threadpool(_encoded, fn, params, None)
        # the request's own ``timeout`` bounds the answer too: 503 at it, whatever the worker is doing
        ctx = executor.context(params.duration("timeout"))
        after.append(ctx.finish)
        if small is not None and executor.forks is not None:
            here = executor.run_here(lambda c: small(params, lambda: _encoded(fn, params, c)), ctx)
            if here is not None:
                return here
        forks = executor.forks if plan is not None else None
        if forks is None:
            return await executor.run(lambda c: _encoded(fn, params, c), ctx=ctx)
        return await executor.run(lambda c: _maybe_forked(forks, plan, fn, params, c), ctx=ctx)

    return _endpoint(call)


def _maybe_forked(forks: Forks, plan: Plan | None, fn: QueryHandler, params: Params,
                  ctx: QueryContext) -> Encoded:
    planned = plan(params) if plan is not None else None
    if planned is None:
        return _encoded(fn, params, ctx)
    store, earliest, fixed = planned
    # identical queries in flight (the same handler and every parameter) share one evaluation
    key = (id(store), fn.__name__, tuple(sorted((k, tuple(v)) for k, v in fixed.values.items())))
    return Encoded(forks.run(store, earliest, lambda c: _relayed(fn, fixed, c), ctx, key))


def _relayed(fn: QueryHandler, params: Params, ctx: QueryContext) -> bytes:
    """In the child: the answer, or the error the API would answer, carried back as :class:`Relayed`."""
    try:
        return _encoded(fn, params, ctx)
    except Exception as exc:
        known = known_error(exc)
        if known is None:
            raise
        raise Relayed(*known) from None


def _encoded(fn: QueryHandler, params: Params, ctx: QueryContext | None) -> Encoded:
    data = fn(params, ctx)
    return Encoded(json.dumps({"status": "success", "data": data}, ensure_ascii=False, allow_nan=False,
                              separators=(",", ":")).encode())  # as starlette's JSONResponse renders


def _endpoint(call: Callable[[Params, After], Awaitable[Any]]) -> Callable[[Request], Awaitable[Response]]:
    async def run(req: Request) -> Response:
        after: After = []
        try:
            resp = await _answer(req, call, after)
        except BaseException:  # the client went away: nothing will be sent
            _run_all(after)
            raise
        if after:
            resp.background = BackgroundTask(_finish, after)
        return resp

    return run


def _run_all(after: After) -> None:
    for fn in after:
        fn()


async def _finish(after: After) -> None:  # a coroutine: starlette runs it on the loop, not a thread
    _run_all(after)


async def _answer(req: Request, call: Callable[[Params, After], Awaitable[Any]], after: After) -> Response:
    try:
        params = await read_params(req)
        data = await call(params, after)
        if isinstance(data, Encoded):
            return Response(bytes(data), media_type="application/json")
        return JSONResponse({"status": "success", "data": data})
    except Exception as exc:
        known = known_error(exc)
        if known is None:  # a bug, not the client's fault: logged, answered as JSON
            log.exception("%s failed", req.url.path)
            return _error("internal error", "internal", 500)
        return _error(*known)


def known_error(exc: BaseException) -> tuple[str, str, int] | None:
    """``(message, errorType, status)`` of an error the API answers as Prometheus does; ``None`` for a bug."""
    if isinstance(exc, ApiError | QueryError):  # timeout 503, too many samples 422, cancelled 503, bad input
        return str(exc), exc.error_type, exc.status
    if isinstance(exc, PromQLError):
        return str(exc), "bad_data", 400  # Prometheus 2.42 gives the parse error as is
    if isinstance(exc, QueryTimeout):
        return str(exc), "timeout", 503
    if isinstance(exc, EvalError):
        return str(exc), "execution", 422
    if isinstance(exc, StoreError):
        return str(exc), "internal", 503
    if isinstance(exc, RecursionError):
        return "expression nested too deeply", "bad_data", 400
    return None


def _error(message: str, error_type: str, status: int) -> JSONResponse:
    return JSONResponse({"status": "error", "errorType": error_type, "error": message}, status_code=status)


def _metric(ls: Labels) -> dict[str, str]:
    return ls.to_dict()


def _engine(server: Server, params: Params, ctx: QueryContext | None) -> Engine:
    timeout = params.duration("timeout") or DEFAULT_QUERY_TIMEOUT_S
    deadline = time.monotonic() + min(timeout, DEFAULT_QUERY_TIMEOUT_S)
    store = server.components.store
    if ctx is None:
        return Engine(store, cancelled=lambda: time.monotonic() > deadline)

    def stop() -> bool:
        ctx.check()  # raises QueryTimeout / QueryCanceled past the server's limit or on cancel
        return time.monotonic() > deadline  # the request's own, shorter ``timeout``

    return Engine(BoundedStore(store, ctx), max_samples=ctx.max_samples,  # type: ignore[arg-type]
                  cancelled=stop)


def _query_text(params: Params) -> str:
    q = params.get("query")
    if q is None or q == "":
        raise ApiError('invalid parameter "query": 1:1: parse error: no expression found in input')
    return q


_CACHED_TEXT = 4096  # longer query texts are parsed every time (the cache holds at most 512 of them)


@lru_cache(maxsize=512)
def _parsed_cached(text: str) -> tuple[Expr, ValueType]:
    return parse_typed(text)


def parsed(text: str) -> tuple[Expr, ValueType]:
    """``parse_typed(text)``, kept for the texts seen last: a dashboard sends the same few queries at
    every refresh, and a query's plan and its evaluation both need the tree (trees are immutable, so
    one is shared by every query with that text). Errors are raised afresh each time."""
    return _parsed_cached(text) if len(text) <= _CACHED_TEXT else parse_typed(text)


def _parse_named(text: str) -> Expr:
    """Parse; errors name the parameter, as 2.42 does for instant queries (not for ranges)."""
    try:
        return parsed(text)[0]
    except PromQLError as exc:
        raise ApiError(f'invalid parameter "query": {exc}') from None


class PromQueryApi:
    """Prometheus's query endpoints of a server: one method an endpoint."""

    def __init__(self, server: Server, executor: QueryExecutor | None = None) -> None:
        self.server = server
        self.executor = executor

    def routes(self) -> list[BaseRoute]:
        """Every endpoint of this API, registered here and nowhere else."""
        return [
            Route("/api/v1/query", query_handler(self.query, self.executor, self.plan_instant,
                                                 self.small_instant), methods=["GET", "POST"]),
            Route("/api/v1/query_range", query_handler(self.query_range, self.executor, self.plan_range,
                                                       self.small_range), methods=["GET", "POST"]),
            Route("/api/v1/format_query", api_handler(self.format_query), methods=["GET", "POST"]),
            Route("/api/v1/query_exemplars", api_handler(self.query_exemplars), methods=["GET", "POST"]),
        ]

    def plan_instant(self, params: Params) -> Planned | None:
        """An instant query's store and earliest read when it is heavy enough to fork, else ``None``.
        The time it runs at is read from the clock here: the child never takes the clock's lock (one
        another thread may have held at the fork)."""
        t = params.time("time", self.server.clock.now())
        if not params.get("time"):
            params = Params({**params.values, "time": [repr(t)]})
        return self._plan(params, t, t, 0.0)

    def plan_range(self, params: Params) -> Planned | None:
        """A range query's store and earliest read when it is heavy enough to fork, else ``None``."""
        return self._plan(params, params.time("start", 0.0), params.time("end", 0.0),
                          params.duration("step") or 0.0)

    def small_instant(self, params: Params, compute: Callable[[], T]) -> T | None:
        """``compute()`` here when the instant query is small (``_query_small``), else ``None``."""
        try:
            t = params.time("time", self.server.clock.now())
        except ApiError:  # answered by the query itself, on a worker
            return None
        return self._small(params, t, t, 0.0, compute)

    def small_range(self, params: Params, compute: Callable[[], T]) -> T | None:
        """``compute()`` here when the range query is small (``_query_small``), else ``None``."""
        try:
            start, end, step = params.time("start", 0.0), params.time("end", 0.0), params.duration("step")
        except ApiError:
            return None
        return None if step is None or step <= 0 else self._small(params, start, end, step, compute)

    def _small(self, params: Params, start: float, end: float, step: float, compute: Callable[[], T],
               ) -> T | None:
        text = params.get("query")
        if not text or end < start or (end - start) / (step or 1.0) > MAX_RANGE_POINTS:
            return None
        try:
            expr = parsed(text)[0]
        except (PromQLError, RecursionError):
            return None
        forks = self.executor.forks if self.executor is not None else None
        most = MAX_POINTS if forks is None else min(MAX_POINTS, forks.min_points - 1)  # heavy ones fork
        return run_if_small(self.server.components.store, expr, start, end, step, compute, most)

    def _plan(self, params: Params, start: float, end: float, step: float) -> Planned | None:
        forks = self.executor.forks if self.executor is not None else None
        text = params.get("query")
        if forks is None or not text or end < start:
            return None
        try:
            expr = parsed(text)[0]
        except (PromQLError, RecursionError):  # answered by the query itself, on the worker
            return None
        store = self.server.components.store
        earliest = forks.earliest(store, expr, start, end, step)
        return None if earliest is None else (store, earliest, params)

    def query(self, params: Params, ctx: QueryContext | None) -> Any:
        text = _query_text(params)
        t = params.time("time", self.server.clock.now())
        res = _engine(self.server, params, ctx).instant(_parse_named(text), t)
        ts = format_api_time(res.time)
        if res.type is ValueType.SCALAR:
            assert isinstance(res.value, float)
            return {"resultType": "scalar", "result": [ts, format_api_float(res.value)]}
        if res.type is ValueType.STRING:
            return {"resultType": "string", "result": [ts, res.value]}
        if isinstance(res.value, Matrix):
            return {"resultType": "matrix", "result": [
                {"metric": _metric(ls), "values": [[format_api_time(x / 1000), format_api_float(y)]
                                                   for x, y in zip(t_.tolist(), v.tolist(), strict=True)]}
                for ls, t_, v in res.value.series]}
        assert isinstance(res.value, list)
        return {"resultType": "vector", "result": [
            {"metric": _metric(ls), "value": [ts, format_api_float(v)]} for ls, v in res.value]}

    def query_range(self, params: Params, ctx: QueryContext | None) -> Any:
        text = _query_text(params)
        start, end = params.get("start"), params.get("end")
        if start is None:
            raise ApiError('invalid parameter "start": cannot parse "" to a valid timestamp')
        if end is None:
            raise ApiError('invalid parameter "end": cannot parse "" to a valid timestamp')
        s, e = params.time("start", 0.0), params.time("end", 0.0)
        if e < s:
            raise ApiError('invalid parameter "end": end timestamp must not be before start time')
        step = params.duration("step")
        if step is None:
            raise ApiError('invalid parameter "step": cannot parse "" to a valid duration')
        if step <= 0:
            raise ApiError('invalid parameter "step": zero or negative query resolution step widths are not '
                           "accepted. Try a positive integer")
        if (e - s) / step > MAX_RANGE_POINTS:
            raise ApiError("exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the "
                           "query resolution (?step=XX)")
        expr, typ = parsed(text)
        if typ not in (ValueType.SCALAR, ValueType.VECTOR):
            doc = "range vector" if typ is ValueType.MATRIX else "string"
            raise ApiError(f'invalid expression type "{doc}" for range query, must be Scalar or '
                           "instant Vector")
        res = _engine(self.server, params, ctx).range(expr, s, e, step)
        return {"resultType": "matrix", "result": [
            {"metric": _metric(ls), "values": [[format_api_time(t), format_api_float(v)] for t, v in pts]}
            for ls, pts in res.series]}

    def format_query(self, params: Params) -> Any:
        return str(_parse_named(_query_text(params)))

    def query_exemplars(self, params: Params) -> Any:
        from inferwatch.server.api._exemplar_api import query_exemplars

        return query_exemplars(params, self.server.components.scrape.exemplars)  # scraped from OpenMetrics


def prom_query_routes(server: Server, executor: QueryExecutor | None = None) -> list[BaseRoute]:
    """``PromQueryApi``'s routes."""
    return PromQueryApi(server, executor).routes()
