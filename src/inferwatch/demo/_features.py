"""The demo's feature store: a small Starlette service the model service calls over HTTP on loopback.

``POST /features {"features": {...}}`` answers the entity's online features
(here: the request's row, validated and cast, as a store keyed by the entity
would answer them), so a demo request crosses a real HTTP hop: the model
service's ``feature_store`` stage calls it with ``monitor.instrument_httpx``,
and its own server span continues the trace from the ``traceparent``.
``latency_ms`` slows every lookup (a story phase, or a test, can slow this
stage instead of the model). Instrumented with its own ``Monitor``.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Mapping
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.demo._bodies import feature_row, read_json
from inferwatch.demo._model import FEATURES
from inferwatch.sdk import Monitor

__all__ = ["FEATURE_STORE_SERVICE", "FeatureStore", "FeatureStoreClient"]

log = logging.getLogger("inferwatch.demo")

FEATURE_STORE_SERVICE = "feature-store"
"""The feature store's service name (its metrics' ``service`` label, its spans' ``service.name``)."""


class FeatureStore:
    """The feature store's ASGI app (``app``), instrumented with ``monitor``."""

    def __init__(self, monitor: Monitor) -> None:
        self.monitor = monitor
        self.latency_ms = 0.0
        """Added to every lookup (a switch for stories and tests)."""
        self.app = monitor.asgi(Starlette(routes=[
            Route("/features", self._lookup, methods=["POST"]),
            Route("/metrics", monitor.metrics_app()),
        ]))

    async def _lookup(self, request: Request) -> JSONResponse:
        try:
            row = feature_row(await read_json(request))
        except InputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        if self.latency_ms:
            await asyncio.sleep(self.latency_ms / 1000)
        return JSONResponse({"features": dict(zip(FEATURES, row.tolist(), strict=True))})


class FeatureStoreClient:
    """The model service's side: ``await lookup(row)`` over HTTP, the trace context propagated."""

    def __init__(self, url: str, monitor: Monitor, timeout_s: float = 5.0) -> None:
        self.url = url.rstrip("/") + "/features"
        nodelay = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]  # no Nagle wait between header and body
        transport = httpx.AsyncHTTPTransport(socket_options=nodelay)
        self._client = httpx.AsyncClient(timeout=timeout_s, transport=transport)
        self._loop: asyncio.AbstractEventLoop | None = None  # the service's: the pool lives there
        if monitor.tracing is not None:
            monitor.instrument_httpx(self._client)

    async def lookup(self, features: Mapping[str, Any]) -> dict[str, float]:
        """The online features of a row; ``InputError`` when the store does not answer them."""
        self._loop = asyncio.get_running_loop()
        try:
            r = await self._client.post(self.url, json={"features": dict(features)})
            if r.status_code != 200:
                raise InputError(f"feature store answered HTTP {r.status_code}")
            return dict(r.json()["features"])
        except (httpx.HTTPError, ValueError, KeyError) as exc:
            raise InputError(f"feature store: {type(exc).__name__}: {exc}") from None

    def close(self, timeout_s: float = 5.0) -> None:
        """Close the kept-alive connections on the service's loop (call before the service stops)."""
        loop = self._loop
        if loop is not None and loop.is_running():
            try:
                asyncio.run_coroutine_threadsafe(self._client.aclose(), loop).result(timeout_s)
            except Exception:  # a stopping service: its connections go with it
                log.warning("demo: closing the feature store client failed", exc_info=True)
