"""``Monitor``'s methods for model runtimes it wraps in-process: ONNX Runtime sessions, TensorRT contexts."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

from inferwatch._exceptions import ConfigError

if TYPE_CHECKING:
    from inferwatch.sdk._aggregator import Aggregator
    from inferwatch.sdk._hooks import MonitorHooks
    from inferwatch.sdk.runtimes._onnx import InstrumentedSession
    from inferwatch.sdk.runtimes._runtime_metrics import RuntimeAggregates
    from inferwatch.sdk.runtimes._tensorrt import InstrumentedContext, TensorRTBuild

__all__ = ["RuntimeMethods"]


class RuntimeMethods:
    """The part of ``Monitor`` for model runtimes; ``Monitor.__init__`` sets the state."""

    service: str
    model: str
    version: str
    _attach_lock: threading.Lock
    _runtimes: RuntimeAggregates | None

    if TYPE_CHECKING:  # Monitor's own
        def attach(self, aggregator: Aggregator) -> None: ...

    def instrument_onnx(self, session: Any, model: str | None = None, version: str | None = None, *,
                        requested_providers: Sequence[Any] | None = None) -> InstrumentedSession:
        """Wrap an ``onnxruntime.InferenceSession``: every ``run`` timed with its batch size, the
        providers it asked for and runs on exported (``inferwatch_onnx_session_info``).

        ``requested_providers`` (names or ``(name, options)``, as given to ONNX Runtime) is needed
        only for a session not made by ``inferwatch.sdk.onnx_session``: ONNX Runtime forgets a
        provider it could not register.
        """
        from inferwatch.sdk.runtimes._onnx import InstrumentedSession, provider_names

        if not callable(getattr(session, "run", None)) or not hasattr(session, "get_providers"):
            raise ConfigError(f"instrument_onnx: {session!r} is not an onnxruntime InferenceSession")
        key = ("onnxruntime", *self._labels(model, version))
        wrapped = InstrumentedSession(session, cast("MonitorHooks", self), key,
                                      provider_names(requested_providers) or None)
        self._runtime_aggregates().describe(key, wrapped.describe)
        return wrapped

    def instrument_tensorrt(self, context: Any, model: str | None = None, version: str | None = None, *,
                            synchronize: Callable[[int], Any] | None = None,
                            build: TensorRTBuild | None = None) -> InstrumentedContext:
        """Wrap a TensorRT ``IExecutionContext``: ``execute_async_v3`` timed (with ``synchronize``,
        until the stream is done), the engine's memory and ``build`` (``build_tensorrt_engine``) exported."""
        from inferwatch.sdk.runtimes._tensorrt import InstrumentedContext

        if not callable(getattr(context, "execute_async_v3", None)) or not hasattr(context, "engine"):
            raise ConfigError(f"instrument_tensorrt: {context!r} is not a TensorRT execution context")
        key = ("tensorrt", *self._labels(model, version))
        wrapped = InstrumentedContext(context, cast("MonitorHooks", self), key,
                                      synchronize=synchronize, build=build)
        self._runtime_aggregates().describe(key, wrapped.describe)
        return wrapped

    def _labels(self, model: str | None, version: str | None) -> tuple[str, str]:
        model = self.model if model is None else model
        version = self.version if version is None else version
        if not isinstance(model, str) or not isinstance(version, str):
            raise ConfigError(f"instrument: model and version must be strings, got {model!r}, {version!r}")
        return model, version

    def _runtime_aggregates(self) -> RuntimeAggregates:
        from inferwatch.sdk.runtimes._runtime_metrics import RuntimeAggregates

        with self._attach_lock:
            if self._runtimes is None:
                self._runtimes = RuntimeAggregates(self.service)
                self.attach(self._runtimes)
            return self._runtimes
