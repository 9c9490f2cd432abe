"""The scale path: an OpenTelemetry Collector config applying the same tail-sampling policies.

When one process's in-service decision is not enough (many replicas, traces
spanning services that each see part of the trace), the Collector's
``tail_sampling`` processor decides over whole traces: OTLP receiver ->
tail_sampling (errors, slow, a fraction of the rest) -> batch -> OTLP to
Jaeger (which takes OTLP natively since 1.35) and, optionally, to
``inferwatch serve``. The policies are OR-ed, as in the service.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["collector_config", "collector_yaml"]


def collector_config(*, jaeger: str = "jaeger:4317", inferwatch: str | None = None,
                     sample_ratio: float = 0.01, slow_threshold_s: float = 1.0,
                     decision_wait_s: float = 10.0) -> dict[str, Any]:
    """The Collector config as a mapping (``collector_yaml`` renders it)."""
    if not 0.0 <= sample_ratio <= 1.0:
        raise ValueError(f"sample_ratio must be in [0, 1], got {sample_ratio!r}")
    exporters: dict[str, Any] = {"otlp/jaeger": {"endpoint": jaeger, "tls": {"insecure": True}}}
    if inferwatch:
        exporters["otlphttp/inferwatch"] = {"endpoint": inferwatch.rstrip("/")}
    return {
        "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "0.0.0.0:4317"},
                                             "http": {"endpoint": "0.0.0.0:4318"}}}},
        "processors": {
            "tail_sampling": {
                "decision_wait": f"{decision_wait_s:g}s",
                "num_traces": 100_000,
                "policies": [
                    {"name": "errors", "type": "status_code", "status_code": {"status_codes": ["ERROR"]}},
                    {"name": "slow", "type": "latency",
                     "latency": {"threshold_ms": round(slow_threshold_s * 1000)}},
                    {"name": "rest", "type": "probabilistic",
                     "probabilistic": {"sampling_percentage": sample_ratio * 100}},
                ],
            },
            "batch": {},
        },
        "exporters": exporters,
        "service": {"pipelines": {"traces": {
            "receivers": ["otlp"], "processors": ["tail_sampling", "batch"], "exporters": list(exporters),
        }}},
    }


def collector_yaml(**settings: Any) -> str:
    """``collector_config(**settings)`` as YAML, ready for ``otelcol-contrib --config``."""
    header = "# OpenTelemetry Collector (contrib): tail sampling as inferwatch does in the service.\n"
    return header + yaml.safe_dump(collector_config(**settings), sort_keys=False)
