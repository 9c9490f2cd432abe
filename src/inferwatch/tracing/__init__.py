"""tracing: OpenTelemetry traces of the inference pipeline, tail-sampled in the service.

``setup`` (or ``Monitor(..., tracing=True)``) configures a TracerProvider
exporting over OTLP/HTTP; ``monitor.stage(name)`` makes each pipeline stage a
child span and a histogram observation; ``TailSamplingProcessor`` keeps every
slow or failed trace and a fraction of the rest. Importing this package does
not import OpenTelemetry; the names that need it load on first use.

The in-service half (setup, spans, stages, propagation, sampling) lives in the SDK,
which instruments the service (``inferwatch.sdk``), and is re-exported here, so the
SDK never imports this package; this package adds the collector config, the stage
breakdown, OTLP decoding and the server's trace store.
"""

from typing import Any

from inferwatch.sdk import (
    MAX_STAGES,
    CountingExporter,
    ServerSpan,
    Stage,
    StageAggregates,
    Tracing,
    instrument_httpx,
)
from inferwatch.sdk import TRACING_INSTALL_HINT as INSTALL_HINT
from inferwatch.sdk import setup_tracing as setup
from inferwatch.tracing._breakdown import StageShift, StageStats, breakdown, slowed_stages
from inferwatch.tracing._collector import collector_config, collector_yaml
from inferwatch.tracing._otlp import OtlpError, decode_json, decode_protobuf, json_list, json_object
from inferwatch.tracing._store import SpanEvent, SpanRecord, TraceStore, TraceSummary

__all__ = [
    "INSTALL_HINT",
    "MAX_STAGES",
    "CountingExporter",
    "OtlpError",
    "SamplingCounts",
    "ServerSpan",
    "SpanEvent",
    "SpanRecord",
    "Stage",
    "StageAggregates",
    "StageShift",
    "StageStats",
    "TailSamplingProcessor",
    "TraceStore",
    "TraceSummary",
    "Tracing",
    "breakdown",
    "collector_config",
    "collector_yaml",
    "decode_json",
    "decode_protobuf",
    "instrument_httpx",
    "json_list",
    "json_object",
    "keeps_by_ratio",
    "setup",
    "slowed_stages",
]

_NEEDS_OTEL = {"SamplingCounts", "TailSamplingProcessor", "keeps_by_ratio"}


def __getattr__(name: str) -> Any:
    if name in _NEEDS_OTEL:
        import inferwatch.sdk

        return getattr(inferwatch.sdk, name)
    raise AttributeError(f"module 'inferwatch.tracing' has no attribute {name!r}")
