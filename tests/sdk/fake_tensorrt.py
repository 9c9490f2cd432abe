"""A stand-in with the interface of TensorRT 10's Python API (``IExecutionContext``, ``ICudaEngine``,
``IBuilder``, ``IBuilderConfig``) for the parts ``instrument_tensorrt`` uses; no GPU, no CUDA.

``execute_async_v3`` "enqueues" by recording the stream; ``synchronize`` (the fake's stream wait)
advances an injected clock by ``compute_s``, so durations are exact.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class TensorIOMode(enum.Enum):
    """``tensorrt.TensorIOMode``."""

    NONE = 0
    INPUT = 1
    OUTPUT = 2


class FakeClock:
    """Monotonic seconds moved by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def monotonic(self) -> float:
        return self.t

    def now(self) -> float:
        return 1_700_000_000.0 + self.t


@dataclass
class FakeEngine:
    """``ICudaEngine``: named I/O tensors and the device memory a context needs."""

    tensors: tuple[tuple[str, TensorIOMode], ...] = (
        ("input", TensorIOMode.INPUT), ("output", TensorIOMode.OUTPUT))
    device_memory_size_v2: int = 48 << 20

    @property
    def num_io_tensors(self) -> int:
        return len(self.tensors)

    def get_tensor_name(self, i: int) -> str:
        return self.tensors[i][0]

    def get_tensor_mode(self, name: str) -> TensorIOMode:
        return dict(self.tensors)[name]

    def create_execution_context(self) -> FakeContext:
        return FakeContext(self)


@dataclass
class FakeContext:
    """``IExecutionContext``: input shapes set by name, ``execute_async_v3`` on a stream handle."""

    engine: FakeEngine
    clock: FakeClock | None = None
    enqueue_s: float = 0.0001
    fail: bool = False
    shapes: dict[str, tuple[int, ...]] = field(default_factory=dict)
    enqueued: list[int] = field(default_factory=list)

    def set_input_shape(self, name: str, shape: tuple[int, ...]) -> bool:
        self.shapes[name] = tuple(shape)
        return True

    def get_tensor_shape(self, name: str) -> tuple[int, ...]:
        return self.shapes.get(name, (-1,))

    def execute_async_v3(self, stream_handle: int) -> bool:
        if self.clock is not None:
            self.clock.t += self.enqueue_s
        if self.fail:
            return False
        self.enqueued.append(stream_handle)
        return True


@dataclass
class FakeStream:
    """A CUDA stream whose ``synchronize`` takes ``compute_s`` of the fake clock."""

    clock: FakeClock
    compute_s: float = 0.004
    waits: int = 0

    def synchronize(self, handle: int) -> None:
        self.clock.t += self.compute_s
        self.waits += 1


@dataclass
class FakeBuilderConfig:
    """``IBuilderConfig``: the workspace pool limit."""

    workspace: int = 1 << 30

    def get_memory_pool_limit(self, pool: object) -> int:
        return self.workspace


@dataclass
class FakeBuilder:
    """``IBuilder``: building takes ``build_s`` of the clock; ``fail`` returns None like TensorRT."""

    clock: FakeClock
    build_s: float = 42.0
    fail: bool = False

    def build_serialized_network(self, network: object, config: FakeBuilderConfig) -> bytes | None:
        self.clock.t += self.build_s
        return None if self.fail else b"plan"
