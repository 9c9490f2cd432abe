"""The SDK: ``Monitor`` (non-blocking recording), middleware, exposition and the service's tracing.

The request thread only appends to a bounded queue; one background thread
aggregates (numpy, loaded by the first large batch) and prometheus-client renders
the exposition (loaded by the first one). Importing the SDK loads no pydantic,
starlette, numpy, OpenTelemetry, prometheus-client, onnxruntime or tensorrt; tracing (``setup_tracing``,
stages as spans, tail sampling) loads OpenTelemetry when it is set up.
``inferwatch.tracing`` re-exports the tracing names.
"""

from typing import Any

from inferwatch.sdk._aggregator import Aggregator
from inferwatch.sdk._config import DEFAULT_BUCKETS, SdkConfig
from inferwatch.sdk._exposition import MetricsApp, MetricsServer, MonitorCollector, read_sample
from inferwatch.sdk._generation import Generation, GenerationSettings, Price
from inferwatch.sdk._hooks import MonitorHooks
from inferwatch.sdk._httpx import instrument_httpx
from inferwatch.sdk._judge import Judge
from inferwatch.sdk._judge_config import DEFAULT_RUBRIC, JudgeConfig
from inferwatch.sdk._middleware import AsgiMiddleware, WsgiMiddleware, route_of_scope
from inferwatch.sdk._monitor import Monitor, Tracking
from inferwatch.sdk._requests import MAX_ROUTES, OTHER_ROUTE
from inferwatch.sdk._stage import MAX_STAGES, Stage, StageAggregates
from inferwatch.sdk._tracing import INSTALL_HINT as TRACING_INSTALL_HINT
from inferwatch.sdk._tracing import CountingExporter, ServerSpan, Tracing
from inferwatch.sdk._tracing import setup as setup_tracing
from inferwatch.sdk.runtimes import (
    ACCELERATOR_PROVIDERS,
    InstrumentedBinding,
    InstrumentedContext,
    InstrumentedSession,
    Placement,
    TensorRTBuild,
    build_tensorrt_engine,
    onnx_session,
)
from inferwatch.sdk.runtimes import INSTALL_HINT as ONNX_INSTALL_HINT

__all__ = [
    "ACCELERATOR_PROVIDERS",
    "DEFAULT_BUCKETS",
    "DEFAULT_RUBRIC",
    "MAX_ROUTES",
    "MAX_STAGES",
    "ONNX_INSTALL_HINT",
    "OTHER_ROUTE",
    "TRACING_INSTALL_HINT",
    "Aggregator",
    "AsgiMiddleware",
    "CountingExporter",
    "Generation",
    "GenerationSettings",
    "InstrumentedBinding",
    "InstrumentedContext",
    "InstrumentedSession",
    "Judge",
    "JudgeConfig",
    "MetricsApp",
    "MetricsServer",
    "Monitor",
    "MonitorCollector",
    "MonitorHooks",
    "Placement",
    "Price",
    "SamplingCounts",
    "SdkConfig",
    "ServerSpan",
    "Stage",
    "StageAggregates",
    "TailSamplingProcessor",
    "TensorRTBuild",
    "Tracing",
    "Tracking",
    "WsgiMiddleware",
    "build_tensorrt_engine",
    "instrument_httpx",
    "keeps_by_ratio",
    "onnx_session",
    "read_sample",
    "route_of_scope",
    "setup_tracing",
]

_NEEDS_OTEL = {"SamplingCounts", "TailSamplingProcessor", "keeps_by_ratio"}


def __getattr__(name: str) -> Any:
    if name in _NEEDS_OTEL:  # OpenTelemetry's SDK loads only when these are used
        from inferwatch.sdk import _sampling

        return getattr(_sampling, name)
    raise AttributeError(f"module 'inferwatch.sdk' has no attribute {name!r}")
