"""The new user's model server for ``bench_quality_pages.py``: the README's setup, on Starlette.

A click-through-rate model behind ``POST /predict``, instrumented as the README and
docs/quality.md show (``Monitor``, ``monitor.asgi``, ``DriftAggregator`` fed by
``observe_prediction``), served by ``uvicorn --workers 2`` with ``INFERWATCH_MULTIPROC_DIR``
set. Only the benchmark's harness is extra: time comes from a file the driver writes
(``IW_BENCH_CLOCK``: compressed time reaches every worker), and while the file
``IW_BENCH_OUTAGE`` exists the model answers 503 (the outage). It uses only APIs that
existed before issue #29, so the same app runs against the old code.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import numpy as np
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route

from inferwatch.quality import DriftAggregator, build_profile
from inferwatch.sdk import Monitor
from quality_pages_data import FEATURES, WINDOW_S, sample


class FileClock:
    """Wall time read from the file the driver writes (every worker's injected clock)."""

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


def _reference() -> dict[str, np.ndarray]:
    rows = sample(np.random.default_rng(29), 10_000)
    return {f: np.array([r[f] for r in rows], dtype=object if f == "country" else float) for f in FEATURES}


def score(row: dict[str, object]) -> float:
    """The model: a fixed logistic regression."""
    z = -3.0 + 0.02 * float(row["age"]) + 0.3 * float(row["clicks"])  # type: ignore[arg-type]
    return float(1.0 / (1.0 + np.exp(-z)))


monitor = Monitor(service="ranker", model="ctr", version="v3",
                  clock=FileClock(os.environ["IW_BENCH_CLOCK"]),
                  aggregators=[DriftAggregator(build_profile(_reference()), service="ranker", model="ctr",
                                               window=WINDOW_S)])
OUTAGE = Path(os.environ["IW_BENCH_OUTAGE"])


async def predict(request: Request) -> JSONResponse:
    if OUTAGE.exists():
        return JSONResponse({"error": "model unavailable"}, status_code=503)
    rows = (await request.json())["rows"]
    scores = []
    for row in rows:
        p = score(row)
        monitor.observe_prediction(row, confidence=max(p, 1.0 - p))
        scores.append(p)
    return JSONResponse({"scores": scores, "pid": os.getpid()})


async def healthz(request: Request) -> PlainTextResponse:
    return PlainTextResponse(str(os.getpid()))  # the driver keeps one connection per worker


app = monitor.asgi(Starlette(routes=[
    Route("/predict", predict, methods=["POST"]), Route("/healthz", healthz),
    Route("/metrics", monitor.metrics_app()),
]))
