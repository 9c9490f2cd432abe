"""The demo's model on ONNX Runtime: the trained logistic regression as an ONNX graph, built at start.

The graph is built with ``onnx.helper`` from the trained weights (no download, no file):
``y = sigmoid(((x - mean) / std) @ (w * mask) + b)``; ``mask`` is all ones on the full path and
keeps the two largest weights on the cheap (degraded) path, so one session serves both. It is
served through ``monitor.instrument_onnx``: every run timed, the providers exported. ``deploy``
replaces the session with one asking for other providers, which is how the story's fallback
chapter asks for an accelerator this machine lacks (the CPU wheel has none): ONNX Runtime runs
it on the CPU, and ``ExecutionProviderFallback`` pages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from inferwatch.demo._model import FEATURES, LogisticModel, Prediction
from inferwatch.sdk import Monitor, onnx_session

__all__ = ["CPU_PROVIDERS", "NUMPY_NOTE", "OnnxModel", "missing_accelerator", "onnx_model"]

log = logging.getLogger("inferwatch.demo")

CPU_PROVIDERS = ("CPUExecutionProvider",)
_ACCELERATORS = ("CUDAExecutionProvider", "ROCMExecutionProvider", "TensorrtExecutionProvider",
                 "DmlExecutionProvider")


def _graph(model: LogisticModel) -> bytes:
    """The serialized ONNX model of ``model`` (opset 17)."""
    import onnx
    from onnx import TensorProto
    from onnx import helper as h

    n, f32 = len(FEATURES), TensorProto.FLOAT

    def const(name: str, values: Any) -> Any:
        arr = np.asarray(values, dtype=np.float32).reshape(-1)
        return h.make_tensor(name, f32, [arr.size] if arr.size > 1 else [1], arr.tolist())

    graph = h.make_graph(
        [h.make_node("Sub", ["x", "mean"], ["centred"], name="centre"),
         h.make_node("Div", ["centred", "std"], ["z"], name="scale"),
         h.make_node("Mul", ["w", "mask"], ["wm"], name="mask_weights"),
         h.make_node("MatMul", ["z", "wm"], ["dot"], name="score"),
         h.make_node("Add", ["dot", "b"], ["logit"], name="bias"),
         h.make_node("Sigmoid", ["logit"], ["y"], name="prob")],
        "ctr_logreg",
        [h.make_tensor_value_info("x", f32, [None, n]), h.make_tensor_value_info("mask", f32, [n])],
        [h.make_tensor_value_info("y", f32, [None])],
        [const("mean", model.mean), const("std", model.std), const("w", model.weights),
         const("b", [model.bias])],
    )
    proto = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)], producer_name="inferwatch-demo")
    proto.ir_version = 8  # read by every onnxruntime of the last years
    onnx.checker.check_model(proto)
    return bytes(proto.SerializeToString())


def _quiet_provider_warning(record: logging.LogRecord) -> bool:
    return "not in available provider names" not in record.getMessage()


def missing_accelerator() -> str | None:
    """An accelerator's provider this machine's ONNX Runtime lacks (the fallback chapter asks for it)."""
    import onnxruntime as ort

    have = set(ort.get_available_providers())
    return next((p for p in _ACCELERATORS if p not in have), None)


class OnnxModel:
    """The logistic regression served by ONNX Runtime; ``predict`` as ``LogisticModel.predict``."""

    def __init__(self, model: LogisticModel, monitor: Monitor) -> None:
        self.logistic = model
        self._bytes = _graph(model)
        self._monitor = monitor
        self._full = np.ones(len(FEATURES), dtype=np.float32)
        self._cheap = np.zeros(len(FEATURES), dtype=np.float32)
        self._cheap[np.argsort(-np.abs(model.weights))[:2]] = 1.0
        self.session: Any = None
        self.providers: tuple[str, ...] = ()
        self.deploy(CPU_PROVIDERS)

    def deploy(self, providers: Sequence[str]) -> None:
        """Serve from a new session asking for ``providers`` (one intra-op thread: a small model)."""
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = opts.inter_op_num_threads = 1
        asked = [*providers, *(p for p in CPU_PROVIDERS if p not in providers)]
        sdk_log = logging.getLogger("inferwatch.sdk")
        sdk_log.addFilter(_quiet_provider_warning)  # the story's note says it; a line would garble the table
        try:
            session = onnx_session(self._bytes, providers=asked, sess_options=opts)
        finally:
            sdk_log.removeFilter(_quiet_provider_warning)
        self.session = self._monitor.instrument_onnx(session)
        self.providers = tuple(providers)

    def predict(self, x: NDArray[np.float64], *, cheap: bool = False) -> Prediction:
        """Score one row (``x`` in FEATURES order) with ONNX Runtime."""
        row = np.asarray(x, dtype=np.float32).reshape(1, -1)
        feed = {"x": row, "mask": self._cheap if cheap else self._full}
        p = float(self.session.run(None, feed)[0][0])
        return Prediction(p, max(p, 1.0 - p), "cheap" if cheap else "full")

    def ask_accelerator(self, on: bool) -> None:
        """Redeploy asking for an accelerator this machine lacks (``on``), or for the CPU again."""
        missing = missing_accelerator() if on else None
        if on and missing is None:  # every accelerator is here: nothing to fall back from
            log.warning("inferwatch demo: this ONNX Runtime has every accelerator: no fallback to show")
            return
        self.deploy([missing] if missing is not None else CPU_PROVIDERS)

    def describe(self) -> dict[str, Any]:
        """What ``GET /admin/state`` says of the runtime."""
        return {"runtime": "onnxruntime", "requested_providers": list(self.providers),
                "providers": list(self.session.get_providers())}


NUMPY_NOTE = ("inferwatch demo: onnxruntime is not installed (pip install 'inferwatch[onnx]'): "
              "serving the numpy model; the provider fallback chapter has nothing to show")
"""The one line the demo prints when it serves the numpy model instead."""


def onnx_model(model: LogisticModel, monitor: Monitor) -> OnnxModel | None:
    """``model`` on ONNX Runtime, or None where the ``onnx`` extra is missing (then say ``NUMPY_NOTE``)."""
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError:
        return None
    return OnnxModel(model, monitor)
