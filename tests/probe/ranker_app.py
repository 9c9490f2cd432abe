"""A small classifier under the SDK (served by uvicorn in the end-to-end probe tests).

``POST /predict`` answers ``{"label": LABELS[x % 10]}``; the ``x`` values listed in
``$RANKER_BROKEN`` are answered wrong (the next label): a model swap that still says 200.
"""

from __future__ import annotations

import os

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from inferwatch.sdk import Monitor

LABELS = ["cat", "dog", "bird", "fish", "frog", "horse", "mouse", "owl", "bee", "ant"]
BROKEN = {int(x) for x in os.environ.get("RANKER_BROKEN", "").split(",") if x}

monitor = Monitor(service="ranker", model="clf", version="v2" if BROKEN else "v1")


async def predict(request: Request) -> JSONResponse:
    x = int((await request.json()).get("x", 0))
    label = LABELS[(x + 1) % len(LABELS)] if x in BROKEN else LABELS[x % len(LABELS)]
    return JSONResponse({"label": label, "score": 0.9})


app = monitor.asgi(Starlette(routes=[Route("/predict", predict, methods=["POST"]),
                                     Route("/metrics", monitor.metrics_app())]))
