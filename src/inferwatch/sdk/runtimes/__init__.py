"""Model runtimes: ONNX Runtime sessions and TensorRT contexts, timed and counted for ``Monitor``.

Neither runtime is imported here: ``onnx_session`` and a wrapped session's caller load them.
"""

from inferwatch.sdk.runtimes._monitor_runtimes import RuntimeMethods
from inferwatch.sdk.runtimes._onnx import INSTALL_HINT, InstrumentedBinding, InstrumentedSession, onnx_session
from inferwatch.sdk.runtimes._onnx_placement import ACCELERATOR_PROVIDERS, Placement
from inferwatch.sdk.runtimes._tensorrt import InstrumentedContext, TensorRTBuild, build_tensorrt_engine

__all__ = [
    "ACCELERATOR_PROVIDERS",
    "INSTALL_HINT",
    "InstrumentedBinding",
    "InstrumentedContext",
    "InstrumentedSession",
    "Placement",
    "RuntimeMethods",
    "TensorRTBuild",
    "build_tensorrt_engine",
    "onnx_session",
]
