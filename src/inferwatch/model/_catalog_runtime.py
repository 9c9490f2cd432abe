"""The catalog's runtime section: model runtimes the SDK wraps in-process (ONNX Runtime, TensorRT).

The run metrics carry a ``runtime`` label (``onnxruntime``, ``tensorrt``) so one
dashboard panel and one rule read both; what only one runtime has (ONNX Runtime's
execution providers, a TensorRT engine's build time and memory) has its own names.
"""

from __future__ import annotations

from inferwatch.model._metric_spec import _C, _G, _H, _SVC, MetricSpec

_RT = (*_SVC, "runtime")

RUNTIME_RUN_DURATION = MetricSpec(
    "inferwatch_runtime_run_duration_seconds", _H,
    "Duration of one call into the model runtime (session.run, execute_async_v3 until synchronised), "
    "as the caller waits, in seconds.",
    _RT, "seconds",
)
RUNTIME_PHASE_DURATION = MetricSpec(
    "inferwatch_runtime_phase_duration_seconds", _H,
    "Duration of one phase of a runtime call where the runtime lets it be measured apart: input "
    "(binding and copy to the device), compute, output (copy back), enqueue (TensorRT's "
    "execute_async_v3 call itself), in seconds.",
    (*_RT, "phase"), "seconds",
)
RUNTIME_BATCH_SIZE = MetricSpec(
    "inferwatch_runtime_batch_size", _H,
    "Rows per runtime call (the leading dimension of the first input): _count is calls, _sum rows.",
    _RT,
)
RUNTIME_RUN_ERRORS_TOTAL = MetricSpec(
    "inferwatch_runtime_run_errors_total", _C, "Runtime calls that raised (the error reached the caller).",
    _RT,
)
ONNX_SESSION_INFO = MetricSpec(
    "inferwatch_onnx_session_info", _G,
    "An ONNX Runtime session (value 1): the execution provider it asked for first (requested_provider), "
    "the one it runs on first (provider; read at every scrape: a run-time fallback shows) and, when it "
    "asked for an accelerator and the graph placement is known, the nodes placed on the CPU (cpu_nodes, "
    "at most 8 named).",
    (*_SVC, "requested_provider", "provider", "cpu_nodes"),
)
ONNX_SESSION_NODES = MetricSpec(
    "inferwatch_onnx_session_nodes", _G,
    "Graph nodes of an ONNX Runtime session by the execution provider they were placed on (from the "
    "session's graph assignment or its profile).",
    (*_SVC, "provider"),
)
TENSORRT_ENGINE_BUILD = MetricSpec(
    "inferwatch_tensorrt_engine_build_seconds", _G, "How long building the TensorRT engine took, in seconds.",
    _SVC, "seconds",
)
TENSORRT_WORKSPACE = MetricSpec(
    "inferwatch_tensorrt_workspace_bytes", _G,
    "The workspace memory pool limit the TensorRT engine was built with, in bytes.", _SVC, "bytes",
)
TENSORRT_DEVICE_MEMORY = MetricSpec(
    "inferwatch_tensorrt_device_memory_bytes", _G,
    "Device memory a TensorRT execution context of the engine needs (activations and scratch), in bytes.",
    _SVC, "bytes",
)

ACCELERATOR_PROVIDERS: tuple[str, ...] = tuple(f"{name}ExecutionProvider" for name in (
    "CUDA", "Tensorrt", "NvTensorRTRTX", "ROCM", "MIGraphX", "Dml", "WebGpu", "CoreML", "QNN", "CANN"))
"""ONNX Runtime's providers for GPUs and NPUs: a session that asks for one and runs on ``CPU`` fell
back (the default rule ``ExecutionProviderFallback`` lists the same; OpenVINO is left out: it may be
asked to run on the CPU)."""
CPU_PROVIDER = "CPUExecutionProvider"

RUNTIME_BUCKETS: tuple[float, ...] = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
)
"""Runtime call bounds: 100 µs (a small model on a GPU) to 10 s, x2 / x2.5 steps."""
BATCH_BUCKETS: tuple[float, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
"""Batch-size bounds: powers of two up to 1024 rows."""
