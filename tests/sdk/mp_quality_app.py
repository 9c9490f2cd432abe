"""The app the multi-worker drift tests serve with real gunicorn and uvicorn.

A model server instrumented as for one process (drift on its predictions); time comes from a
file the test writes (``IW_TEST_CLOCK``), so every worker closes the same window when the test
says. ``/predict?seed=S&n=N&shift=D`` observes the rows ``rows(S, N, D)``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import numpy as np

from inferwatch.quality import DriftAggregator, Profile, build_profile
from inferwatch.sdk import Monitor

WINDOW_S = 60.0
MIN_SAMPLES = 200


class FileClock:
    """Wall time read from a file the test writes (the injected clock of every worker)."""

    def __init__(self, path: str) -> None:
        self.path = Path(path)

    def now(self) -> float:
        return float(self.path.read_text())

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    def wait(self, event: threading.Event, timeout: float) -> bool:
        return event.wait(timeout)


def profile() -> Profile:
    rng = np.random.default_rng(5)
    return build_profile({"x": rng.normal(size=4000), "y": rng.exponential(size=4000)})


def rows(seed: int, n: int, shift: float) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1000 + seed)
    return {"x": rng.normal(shift, size=n), "y": rng.exponential(size=n)}


def aggregator() -> DriftAggregator:
    return DriftAggregator(profile(), service="svc", model="m", window=WINDOW_S, min_samples=MIN_SAMPLES)


monitor = Monitor("svc", "m", "v1", clock=FileClock(os.environ.get("IW_TEST_CLOCK", "")),
                  aggregators=[aggregator()])
PID = str(os.getpid())


def _predict(query: str) -> None:
    q = {k: v[0] for k, v in parse_qs(query).items()}
    monitor.observe_prediction(rows(int(q["seed"]), int(q["n"]), float(q["shift"])))
    time.sleep(0.02)  # a little service time, so concurrent requests spread over the workers


def _wsgi(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    if environ["PATH_INFO"] == "/metrics":
        body = monitor.metrics_text()
    else:
        _predict(environ.get("QUERY_STRING", ""))
        body = PID
    start_response("200 OK", [("content-type", "text/plain"), ("x-pid", PID)])
    return [body.encode()]


wsgi = monitor.wsgi(_wsgi)


async def _asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await monitor.metrics_app()(scope, receive, send)
        return
    if scope["path"] == "/metrics":
        body = monitor.metrics_text()
    else:
        _predict(scope.get("query_string", b"").decode())
        body = PID
    await send({"type": "http.response.start", "status": 200, "headers": [(b"x-pid", PID.encode())]})
    await send({"type": "http.response.body", "body": body.encode()})


asgi = monitor.asgi(_asgi)
