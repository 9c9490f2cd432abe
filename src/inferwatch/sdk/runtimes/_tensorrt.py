"""TensorRT: ``monitor.instrument_tensorrt(context)`` times every ``execute_async_v3`` of a context.

``execute_async_v3(stream)`` only enqueues the work on a CUDA stream: without a way to wait for
the stream, the wrapper can time the enqueue and nothing else. Given ``synchronize`` (a callable
that waits for the stream: ``cudart.cudaStreamSynchronize``, ``torch.cuda.Stream.synchronize``...)
it waits after each call and records the whole run (phase ``enqueue`` and phase ``compute``, the
wait). The engine's device memory, the workspace limit it was built with and its build time
(``build_tensorrt_engine``) are gauges. Duck-typed on TensorRT 10's Python API, so the code path
runs on a fake with the same interface where no GPU is; ``tensorrt`` is never imported by
``import inferwatch.sdk``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from inferwatch.model import metrics as catalog
from inferwatch.sdk.runtimes._runtime_metrics import RUNTIME, Described, RuntimeKey

if TYPE_CHECKING:
    from inferwatch.sdk._hooks import MonitorHooks

__all__ = ["InstrumentedContext", "TensorRTBuild", "build_tensorrt_engine"]


@dataclass(frozen=True)
class TensorRTBuild:
    """A built engine (``builder.build_serialized_network``'s plan), how long it took, its workspace."""

    plan: Any
    seconds: float
    workspace_bytes: int | None


def build_tensorrt_engine(builder: Any, network: Any, config: Any,
                          clock: Callable[[], float] = time.monotonic) -> TensorRTBuild:
    """Build the serialized engine, timed; the workspace pool limit read from ``config``."""
    t0 = clock()
    plan = builder.build_serialized_network(network, config)
    seconds = clock() - t0
    if plan is None:  # TensorRT reports a failed build by returning None, its log says why
        from inferwatch._exceptions import InferwatchError

        raise InferwatchError(
            f"tensorrt: building the engine failed after {seconds:.1f}s (see TensorRT's log)")
    return TensorRTBuild(plan, seconds, _workspace(config))


def _workspace(config: Any) -> int | None:
    try:
        import tensorrt

        pool: Any = tensorrt.MemoryPoolType.WORKSPACE
    except ImportError:  # a stand-in with TensorRT's interface
        pool = "WORKSPACE"
    try:
        return int(config.get_memory_pool_limit(pool))
    except Exception:
        return None


class InstrumentedContext:
    """A TensorRT execution context whose runs are recorded (made by ``Monitor.instrument_tensorrt``)."""

    def __init__(self, context: Any, monitor: MonitorHooks, key: RuntimeKey, *,
                 synchronize: Callable[[int], Any] | None = None, build: TensorRTBuild | None = None) -> None:
        self.context = context
        """The wrapped ``tensorrt.IExecutionContext``."""
        self._key, self._sync, self.build = key, synchronize, build
        self._observe, self._mono = monitor.observe, monitor.monotonic
        self._input = _first_input(context.engine)

    def execute_async_v3(self, stream_handle: int) -> bool:
        """Enqueue the inference on ``stream_handle``; with ``synchronize``, wait for it (timed)."""
        t0 = self._mono()
        try:
            ok = self.context.execute_async_v3(stream_handle)
            t1 = self._mono()
            if self._sync is not None:
                self._sync(stream_handle)
        except BaseException:
            self._observe(RUNTIME, (self._key, self._mono() - t0, 0, True, ""))
            raise
        t2 = self._mono()
        if not ok:  # TensorRT says it could not enqueue: an error the caller sees as False
            self._observe(RUNTIME, (self._key, t2 - t0, 0, True, ""))
            return bool(ok)
        self._observe(RUNTIME, (self._key, t2 - t0, self._batch(), False, ""))
        self._observe(RUNTIME, (self._key, t1 - t0, 0, False, "enqueue"))
        if self._sync is not None:
            self._observe(RUNTIME, (self._key, t2 - t1, 0, False, "compute"))
        return bool(ok)

    def execute_v2(self, bindings: Any) -> bool:
        """The synchronous call: timed whole."""
        t0 = self._mono()
        try:
            ok = self.context.execute_v2(bindings)
        except BaseException:
            self._observe(RUNTIME, (self._key, self._mono() - t0, 0, True, ""))
            raise
        self._observe(RUNTIME, (self._key, self._mono() - t0, self._batch() if ok else 0, not ok, ""))
        return bool(ok)

    def _batch(self) -> int:
        if self._input is None:
            return 0
        try:
            n = self.context.get_tensor_shape(self._input)[0]
            return n if type(n) is int and n > 0 else 0
        except Exception:
            return 0

    def describe(self) -> Described:
        """The engine's memory and build figures (gauges), read now."""
        out: list[tuple[catalog.MetricSpec, tuple[str, ...], float]] = []
        engine = self.context.engine
        memory = getattr(engine, "device_memory_size_v2", None)
        if memory is None:
            memory = getattr(engine, "device_memory_size", None)
        if isinstance(memory, int):
            out.append((catalog.TENSORRT_DEVICE_MEMORY, (), float(memory)))
        if self.build is not None:
            out.append((catalog.TENSORRT_ENGINE_BUILD, (), self.build.seconds))
            if self.build.workspace_bytes is not None:
                out.append((catalog.TENSORRT_WORKSPACE, (), float(self.build.workspace_bytes)))
        return Described(tuple(out))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.context, name)


def _first_input(engine: Any) -> str | None:
    """The name of the engine's first input tensor (TensorRT 10's name-based I/O)."""
    try:
        for i in range(engine.num_io_tensors):
            name = engine.get_tensor_name(i)
            if getattr(engine.get_tensor_mode(name), "name", "") == "INPUT":
                return str(name)
    except Exception:
        return None
    return None
