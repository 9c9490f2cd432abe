"""The app the multi-worker tests serve with real gunicorn and uvicorn, instrumented in one step.

Nothing here knows about workers: ``INFERWATCH_MULTIPROC_DIR`` in the environment makes the
monitor answer for all of them. ``x-pid`` names the worker that answered.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

from inferwatch.sdk import Monitor

monitor = Monitor("svc", "m", "v1")
PID = [(b"x-pid", str(os.getpid()).encode())]


def _wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    body = (monitor.metrics_text() if environ["PATH_INFO"] == "/metrics" else str(os.getpid())).encode()
    start_response("200 OK", [("content-type", "text/plain"), ("x-pid", str(os.getpid()))])
    return [body]


wsgi = monitor.wsgi(_wsgi)

_metrics = monitor.metrics_app()


async def _asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await _metrics(scope, receive, send)  # answers startup and shutdown
        return

    async def send_pid(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message["headers"] = [*message.get("headers", []), *PID]
        await send(message)

    if scope["path"] == "/metrics":
        await _metrics(scope, receive, send_pid)
        return
    body = str(os.getpid()).encode()
    await send_pid({"type": "http.response.start", "status": 200, "headers": []})
    await send_pid({"type": "http.response.body", "body": body})


asgi = monitor.asgi(_asgi)
