"""The demo's HTTP API and web dashboard: the embedded server's Prometheus-shaped API, the
alerting API (silences, notifications, actions) and the dashboard at ``/``, on loopback.

The server starts when the part is made, so ``inferwatch demo`` can print the
dashboard's URL before the story starts and uvicorn's start-up is done before
the story's clock runs; until ``start`` mounts the APIs it answers 503.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from starlette.responses import PlainTextResponse

from inferwatch.config import Secret
from inferwatch.demo._alerts import AlertView
from inferwatch.demo._pipeline import PipelineView
from inferwatch.demo._quality import MODEL, SERVICE
from inferwatch.demo._runner import DemoContext
from inferwatch.demo._serve import ServerThread
from inferwatch.model import SystemClock
from inferwatch.quality import DriftAggregator
from inferwatch.tracing import TraceStore

__all__ = ["DashboardPart"]


class DashboardPart:
    """A DemoPart serving the API and the dashboard for the demo's server and pipeline.

    Start it after ``pipeline`` and ``alerts`` (parts start in list order).
    """

    def __init__(self, alerts: AlertView, pipeline: PipelineView, drift: DriftAggregator | None = None,
                 *, host: str = "127.0.0.1", port: int = 0, token: str | None = None) -> None:
        self.alerts, self.pipeline, self.drift = alerts, pipeline, drift
        self.token = Secret(token or secrets.token_urlsafe(18))
        self.traces = TraceStore(":memory:", clock=SystemClock())  # spans carry real time, not the story's
        """The traces the demo's services export here (``traces_url``), for ``diagnose latency``."""
        self._app = _Placeholder()
        self._http = ServerThread(self._app, host=host, port=port).start()
        # the server is built with this part's token and trace store; the demo's services send
        # traces without a token
        alerts.embed = replace(alerts.embed, token=self.token, traces=self.traces, traces_token=False)
        alerts.drift = self.drift_reports
        alerts.external_url = self._http.url  # links in the demo's notifications open this dashboard

    @property
    def traces_url(self) -> str:
        """Where the demo's services send OTLP/HTTP (``POST {traces_url}/v1/traces``)."""
        return self._http.url

    @property
    def url(self) -> str:
        """The dashboard's URL (``http://host:port/``)."""
        return self._http.url + "/"

    def drift_reports(self) -> list[dict[str, Any]]:
        """The drift aggregator's last closed window, as the dashboard's drift view wants it."""
        last = self.drift.last if self.drift is not None else None
        if last is None:
            return []
        return [{"service": SERVICE, "model": MODEL, "start": last.start, "rows": last.rows,
                 "features": [f.to_json() for f in last.features.values()]}]

    def start(self, ctx: DemoContext) -> None:
        """Serve the app ``inferwatch.server.build`` made for the server the other parts started."""
        parts = self.alerts.parts
        if parts is None or self.pipeline.pipeline is None:
            raise RuntimeError("DashboardPart starts after the AlertView and PipelineView parts")
        self._app.app = parts.app()  # every route `serve` mounts

    def refresh(self, ctx: DemoContext, story_t: float) -> Iterable[str]:
        """Nothing to show: the dashboard is the view."""
        return ()

    def stop(self, ctx: DemoContext) -> None:
        """Stop serving."""
        self._http.stop()


class _Placeholder:
    """An ASGI app that hands every request to ``app`` once ``start`` has set it (503 before)."""

    def __init__(self) -> None:
        self.app: Any = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if self.app is None:
            if scope["type"] == "http":
                await PlainTextResponse("the demo is starting\n", status_code=503)(scope, receive, send)
            return
        await self.app(scope, receive, send)
