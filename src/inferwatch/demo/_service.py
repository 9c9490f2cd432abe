"""The demo model service: Starlette ``/predict`` with fault switches, instrumented with the SDK.

Endpoints:
    POST /predict         {"features": {"age": 31, ...}} -> {"score", "confidence", "path"}
    POST /admin/faults    {"latency_ms": 800, "error_ratio": 0.02, "unavailable_ratio": 0.5} (partial update)
    POST /admin/degrade   {"enabled": true} -> the cheap model path, which skips the injected latency
    GET  /admin/state     the switches and the model's description
    GET  /metrics         the SDK's exposition
Bad bodies get 400 with a JSON ``error`` naming the field; never 500.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from numpy.typing import NDArray
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from inferwatch._exceptions import InputError
from inferwatch.demo._bodies import feature_row as _features
from inferwatch.demo._bodies import number as _number
from inferwatch.demo._bodies import read_json as _json
from inferwatch.demo._features import FeatureStoreClient
from inferwatch.demo._model import FEATURES, LogisticModel
from inferwatch.demo._onnx_model import OnnxModel
from inferwatch.sdk import Monitor

__all__ = ["DemoService", "Faults"]

MAX_LATENCY_MS = 60_000.0
Row = np.ndarray[Any, np.dtype[np.float64]]


@dataclass(frozen=True, slots=True)
class Faults:
    """Injected faults: added latency on the full model path, 500s and 503s by ratio."""

    latency_ms: float = 0.0
    error_ratio: float = 0.0
    unavailable_ratio: float = 0.0

    def updated(self, body: Mapping[str, Any]) -> Faults:
        """A copy with the fields of ``body`` changed; InputError naming a bad field."""
        unknown = sorted(set(body) - {"latency_ms", "error_ratio", "unavailable_ratio"})
        if unknown:
            raise InputError(f"faults: unknown field {unknown[0]!r}")
        changes = {k: _number(body, k, 0.0, MAX_LATENCY_MS if k == "latency_ms" else 1.0) for k in body}
        return replace(self, **changes)


class DemoService:
    """The model behind HTTP, with switches the story, alert actions and tests flip."""

    def __init__(self, model: LogisticModel | OnnxModel, monitor: Monitor, rng: np.random.Generator,
                 feature_store: str | None = None) -> None:
        self.model, self.monitor = model, monitor
        self._store = FeatureStoreClient(feature_store, monitor) if feature_store else None
        """The feature store called over HTTP in the ``feature_store`` stage (None: looked up in-process)."""
        self._rng = rng
        self._lock = threading.Lock()
        self._faults = Faults()
        self._degraded = False
        self.on_prediction: Callable[[str, NDArray[np.float64]], None] | None = None
        """Called with each served prediction's request id and row (the demo's late labels)."""
        self._ids = itertools.count()
        self.app = monitor.asgi(Starlette(routes=[
            Route("/predict", self._predict, methods=["POST"]),
            Route("/admin/faults", self._set_faults, methods=["POST"]),
            Route("/admin/degrade", self._set_degrade, methods=["POST"]),
            Route("/admin/state", self._state, methods=["GET"]),
            Route("/metrics", monitor.metrics_app()),
        ]))
        """The instrumented ASGI app to serve."""

    def use_feature_store(self, url: str) -> None:
        """Look features up at the feature store at ``url`` (before the service serves)."""
        self._store = FeatureStoreClient(url, self.monitor)

    def close(self) -> None:
        """Close the feature store client's connections (before the HTTP server stops)."""
        if self._store is not None:
            self._store.close()

    # --- switches (also callable in-process) -----------------------------------------------
    @property
    def faults(self) -> Faults:
        """The current faults."""
        with self._lock:
            return self._faults

    def set_faults(self, faults: Faults) -> None:
        """Replace the injected faults."""
        with self._lock:
            self._faults = faults

    @property
    def degraded(self) -> bool:
        """Whether the cheap model path is on."""
        with self._lock:
            return self._degraded

    def set_degraded(self, enabled: bool) -> None:
        """Switch the cheap model path on or off."""
        with self._lock:
            self._degraded = enabled

    def set_accelerator(self, on: bool) -> None:
        """Redeploy the ONNX model asking for an accelerator this machine lacks, or for the CPU."""
        if isinstance(self.model, OnnxModel):
            self.model.ask_accelerator(on)

    def state(self) -> dict[str, Any]:
        """What ``GET /admin/state`` answers."""
        runtime = self.model.describe() if isinstance(self.model, OnnxModel) else {"runtime": "numpy"}
        return {
            "faults": asdict(self.faults),
            "degraded": self.degraded,
            "model": {"kind": "logistic_regression", "features": list(FEATURES),
                      "service": self.monitor.service, "version": self.monitor.version, **runtime},
        }

    # --- handlers ---------------------------------------------------------------------------
    async def _predict(self, request: Request) -> JSONResponse:
        faults, degraded = self.faults, self.degraded
        if faults.unavailable_ratio and self._rng.random() < faults.unavailable_ratio:
            return JSONResponse({"error": "service unavailable (injected)"}, status_code=503)
        try:
            x = _features(await _json(request))
        except InputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        m = self.monitor
        try:
            with m.stage("feature_store"):
                x = await self._lookup(x)
        except InputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)
        try:
            with m.stage("model"):  # the injected latency slows this stage (the degraded path skips it)
                if faults.latency_ms and not degraded:
                    await asyncio.sleep(faults.latency_ms / 1000 * (0.8 + 0.4 * self._rng.random()))
                if faults.error_ratio and self._rng.random() < faults.error_ratio:
                    raise _ModelError("model error (injected)")
                pred = self.model.predict(x, cheap=degraded)
        except _ModelError as exc:
            return JSONResponse({"error": str(exc)}, status_code=500)
        with m.stage("postprocess"):
            rid, hook = f"r{next(self._ids)}", self.on_prediction
            m.observe_prediction(
                dict(zip(FEATURES, x.tolist(), strict=True)), confidence=pred.confidence,
                probabilities=(1.0 - pred.score, pred.score), request_id=rid if hook else None,
            )
            if hook is not None:
                hook(rid, x)
            body = {"score": pred.score, "confidence": pred.confidence, "path": pred.path}
        return JSONResponse(body)

    async def _lookup(self, x: Row) -> Row:
        if self._store is None:
            return x
        row = await self._store.lookup(dict(zip(FEATURES, x.tolist(), strict=True)))
        try:
            return np.array([float(row[f]) for f in FEATURES])
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"feature store: bad answer: {exc!r}") from None

    async def _set_faults(self, request: Request) -> JSONResponse:
        try:
            body = await _json(request)
            self.set_faults(self.faults.updated(body))
        except InputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse(self.state())

    async def _set_degrade(self, request: Request) -> JSONResponse:
        try:
            body = await _json(request)
            enabled = body.get("enabled")
            if not isinstance(enabled, bool):
                raise InputError(f"degrade: 'enabled' must be true or false, got {enabled!r}")
        except InputError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        self.set_degraded(enabled)
        return JSONResponse(self.state())

    async def _state(self, request: Request) -> JSONResponse:
        return JSONResponse(self.state())


class _ModelError(Exception):
    """The injected model failure (marks the ``model`` stage as failed)."""
