"""Small ONNX models built in the test (``onnx.helper``, no download) and sessions on them.

ONNX Runtime warns (a ``UserWarning``, an error under pytest's settings) when asked for a provider
it does not have; ``onnx_session`` turns that warning into a log line, so the tests use it to ask
for ``CUDAExecutionProvider`` on the CPU wheel: the fallback case.
"""

from __future__ import annotations

from typing import Any

from tests._require import require_module

NODES = ("score", "bias", "prob")
"""The named nodes of ``logistic_model``, in graph order."""
GPU_ASK = ["CUDAExecutionProvider", "CPUExecutionProvider"]


def logistic_model(features: int = 5) -> bytes:
    """``sigmoid(x @ W + b)`` on ``features`` float inputs per row, any batch size (serialized)."""
    onnx = require_module("onnx")
    require_module("onnxruntime")
    h, f32 = onnx.helper, onnx.TensorProto.FLOAT
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "W"], ["z"], name="score"),
         h.make_node("Add", ["z", "b"], ["logit"], name="bias"),
         h.make_node("Sigmoid", ["logit"], ["y"], name="prob")],
        "logistic", [h.make_tensor_value_info("x", f32, [None, features])],
        [h.make_tensor_value_info("y", f32, [None, 1])],
        [h.make_tensor("W", f32, [features, 1], [0.1] * features), h.make_tensor("b", f32, [1], [0.0])],
    )
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])
    model.ir_version = 8  # what every onnxruntime of the last years reads
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


def session(providers: list[str], **kwargs: Any) -> Any:
    """A session on ``logistic_model`` asking for ``providers`` (made by ``onnx_session``)."""
    from inferwatch.sdk import onnx_session

    return onnx_session(logistic_model(), providers=providers, **kwargs)
