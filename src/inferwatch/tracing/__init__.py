"""tracing: OpenTelemetry traces of the inference pipeline, tail-sampled in the service.

``setup`` (or ``Monitor(..., tracing=True)``) configures a TracerProvider
exporting over OTLP/HTTP; ``monitor.stage(name)`` makes each pipeline stage a
child span and a histogram observation; ``TailSamplingProcessor`` keeps every
slow or failed trace and a fraction of the rest. Importing this package does
not import OpenTelemetry; the names that need it load on first use.
"""

from typing import Any

from inferwatch.tracing._collector import collector_config, collector_yaml
from inferwatch.tracing._http import ServerSpan
from inferwatch.tracing._httpx import instrument_httpx
from inferwatch.tracing._setup import INSTALL_HINT, CountingExporter, Tracing, setup
from inferwatch.tracing._stage import MAX_STAGES, Stage, StageAggregates

__all__ = [
    "INSTALL_HINT",
    "MAX_STAGES",
    "CountingExporter",
    "SamplingCounts",
    "ServerSpan",
    "Stage",
    "StageAggregates",
    "TailSamplingProcessor",
    "Tracing",
    "collector_config",
    "collector_yaml",
    "instrument_httpx",
    "keeps_by_ratio",
    "setup",
]

_NEEDS_OTEL = {"SamplingCounts", "TailSamplingProcessor", "keeps_by_ratio"}


def __getattr__(name: str) -> Any:
    if name in _NEEDS_OTEL:
        from inferwatch.tracing import _sampling

        return getattr(_sampling, name)
    raise AttributeError(f"module 'inferwatch.tracing' has no attribute {name!r}")
