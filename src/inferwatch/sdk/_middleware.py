"""ASGI and WSGI middleware: one ``record_request`` per HTTP request, plus the inflight gauge.

The route label is the matched route template when the framework leaves one in
the ASGI scope (Starlette and FastAPI set ``scope["route"]``), else the raw
path; pass ``route=`` to choose it yourself (raw paths with ids in them make
one series per id).

Requests to the paths in ``exclude`` (by default :data:`EXCLUDED_PATHS`: the
metrics endpoint and the usual health probes) pass through unrecorded: a scrape
or a probe is not traffic, and counting them dilutes every ratio (a service
failing every request read 0.9932 instead of 1.0) and hides a stop of the
traffic. Pass ``exclude=()`` to record them too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import TYPE_CHECKING, Any

from inferwatch.sdk._generation import CURRENT, RequestMark
from inferwatch.sdk._hooks import AsgiApp, Receive, RouteOf, Scope, Send, WsgiApp
from inferwatch.sdk._streaming import StreamWatch

if TYPE_CHECKING:
    from inferwatch.sdk._hooks import MonitorHooks


def asgi_carrier(headers: Iterable[tuple[bytes, bytes]]) -> dict[str, str]:
    """ASGI header pairs as the lower-case ``str`` mapping trace propagators read."""
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in headers}


def wsgi_carrier(environ: Mapping[str, Any]) -> dict[str, str]:
    """The ``HTTP_*`` entries of a WSGI environ, keyed by lower-case header name."""
    return {k[5:].replace("_", "-").lower(): str(v) for k, v in environ.items() if k.startswith("HTTP_")}

__all__ = ["EXCLUDED_PATHS", "AsgiApp", "AsgiMiddleware", "RouteOf", "WsgiApp", "WsgiMiddleware",
           "route_of_scope"]

EXCLUDED_PATHS: frozenset[str] = frozenset({"/metrics", "/health", "/healthz", "/livez", "/readyz", "/ping"})
"""Paths the middleware does not record by default (exact match on the raw path)."""


def route_of_scope(scope: Scope) -> str:
    """The matched route's template (``/items/{id}``) if the router recorded it, else the path."""
    template = getattr(scope.get("route"), "path", None)
    return template if isinstance(template, str) else str(scope.get("path", ""))


class AsgiMiddleware:
    """Records status and duration of every HTTP request passing through ``app``.

    A streamed token response (``text/event-stream``, or a route in ``generative``)
    is also recorded as a generation, first body chunk = first token, unless the
    app tracks it itself (see ``inferwatch.sdk._streaming``). A generation's
    request is counted by code (QPS, error ratios) but its duration stays out of
    the request-latency histogram: a healthy stream lasts seconds, and its
    latency is time to first token and per output token.
    """

    def __init__(self, app: AsgiApp, monitor: MonitorHooks, route: RouteOf | None = None,
                 generative: Iterable[str] = (), exclude: Iterable[str] = EXCLUDED_PATHS) -> None:
        self.app, self._monitor, self._route = app, monitor, route or route_of_scope
        self._generative = frozenset(generative)
        self._exclude = frozenset(exclude)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") in self._exclude:
            await self.app(scope, receive, send)
            return
        monitor = self._monitor
        status = 500  # an app that raises before responding counts as a server error

        async def send_status(message: MutableMapping[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            watch.message(message)
            await send(message)

        tracing = monitor.tracing
        span = None if tracing is None else tracing.server_span(
            str(scope.get("method", "")), str(scope.get("path", "")), asgi_carrier(scope.get("headers", ())))
        monitor.add_inflight(1)
        t0 = monitor.monotonic()
        watch = StreamWatch(monitor, scope, self._route, self._generative, t0)
        current = CURRENT.set(watch)
        try:
            await self.app(scope, receive, send_status)
        except BaseException:
            status = 500
            raise
        finally:
            CURRENT.reset(current)
            route, duration = self._route(scope), monitor.monotonic() - t0
            generative = watch.generative
            if generative:  # counted, but its latency is the generation histograms' (no false pages)
                monitor.count_request(route, status)
            else:
                monitor.record_request(route, status, duration)
            watch.done(route, status, duration)
            monitor.add_inflight(-1)
            if span is not None and (trace_id := span.end(status, route)):
                if generative:
                    watch.exemplar(monitor, trace_id)
                else:
                    monitor.record_exemplar(route, duration, trace_id)


class WsgiMiddleware:
    """Records status and duration (until the body is closed) of every WSGI request.

    A request in which the application tracks a generation (``track_generation`` in
    the view or while its body is iterated) is counted by code only, as under ASGI.
    """

    def __init__(
        self, app: WsgiApp, monitor: MonitorHooks, route: Callable[[dict[str, Any]], str] | None = None,
        exclude: Iterable[str] = EXCLUDED_PATHS,
    ) -> None:
        self.app, self._monitor = app, monitor
        self._route = route or (lambda environ: str(environ.get("PATH_INFO", "") or "/"))
        self._exclude = frozenset(exclude)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") in self._exclude:
            return self.app(environ, start_response)
        monitor = self._monitor
        state = {"status": 500}

        def capture(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            code = status.split(" ", 1)[0]
            state["status"] = int(code) if code.isdigit() else 500
            return start_response(status, headers, exc_info) if exc_info else start_response(status, headers)

        tracing = monitor.tracing
        span = None if tracing is None else tracing.server_span(
            str(environ.get("REQUEST_METHOD", "")), str(environ.get("PATH_INFO", "")), wsgi_carrier(environ))
        monitor.add_inflight(1)
        t0 = monitor.monotonic()
        mark = RequestMark(t0)
        current = CURRENT.set(mark)
        try:
            body = self.app(environ, capture)
        except BaseException:
            self._done(environ, 500, t0, span, mark)
            raise
        finally:
            CURRENT.reset(current)
        return _ClosingBody(
            body, lambda failed: self._done(environ, 500 if failed else state["status"], t0, span, mark),
            mark)

    def _done(self, environ: dict[str, Any], status: int, t0: float, span: Any, mark: RequestMark) -> None:
        m = self._monitor
        route, duration = self._route(environ), m.monotonic() - t0
        if mark.explicit:  # a generation: its latency is the generation histograms'
            m.count_request(route, status)
        else:
            m.record_request(route, status, duration)
        m.add_inflight(-1)
        if span is not None and (trace_id := span.end(status, route)):
            if mark.explicit:
                mark.exemplar(m, trace_id)
            else:
                m.record_exemplar(route, duration, trace_id)


class _ClosingBody:
    """Iterates the app's body and records once when the server closes it (PEP 3333)."""

    def __init__(self, body: Iterable[bytes], done: Callable[[bool], None], mark: RequestMark) -> None:
        self._body, self._done, self._failed, self._recorded = body, done, False, False
        self._mark = mark

    def __iter__(self) -> Iterator[bytes]:
        it = iter(self._body)
        while True:
            current = CURRENT.set(self._mark)  # a generator body tracking a generation finds its request
            try:
                chunk = next(it)
            except StopIteration:
                return
            except BaseException:
                self._failed = True
                raise
            finally:
                CURRENT.reset(current)
            yield chunk

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            if not self._recorded:
                self._recorded = True
                self._done(self._failed)
