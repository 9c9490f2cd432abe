"""``otel-collector.yaml``: OTLP in, tail sampling, batch, OTLP out to Jaeger.

Tail sampling keeps every trace with an error, every trace slower than the
tightest latency rule of the config (the P99 alert's threshold, 500 ms by
default: the traces that explain a latency alert), and a probabilistic share
of the rest. The SDK exports OTLP to the collector's 4317 (gRPC) or 4318
(HTTP); Jaeger (1.35+) takes OTLP on its own 4317.
"""

from __future__ import annotations

from typing import Any

from inferwatch.config import Config
from inferwatch.export._files import ExportedFile, dump_yaml
from inferwatch.export._options import ExportOptions
from inferwatch.model import metrics
from inferwatch.rules import load_rules

__all__ = ["DEFAULT_SLOW_MS", "collector_config", "export_otel_collector", "slow_trace_ms"]

DEFAULT_SLOW_MS = 500
BASELINE_PERCENT = 10.0


def slow_trace_ms(config: Config) -> int:
    """The smallest fixed threshold (ms) of an upper-bound rule on the request-duration histogram."""
    found = [r.threshold for r in load_rules(config)
             if r.threshold is not None and r.comparison in (">", ">=")
             and metrics.REQUEST_DURATION.name in str(r.signal)]
    return round(min(found) * 1000) if found else DEFAULT_SLOW_MS


def collector_config(config: Config, opts: ExportOptions) -> dict[str, Any]:
    """The collector's config as a dict."""
    return {
        "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "0.0.0.0:4317"},
                                             "http": {"endpoint": "0.0.0.0:4318"}}}},
        "processors": {
            "memory_limiter": {"check_interval": "1s", "limit_percentage": 80, "spike_limit_percentage": 20},
            "tail_sampling": {
                "decision_wait": "10s", "num_traces": 50000, "expected_new_traces_per_sec": 100,
                "policies": [
                    {"name": "errors", "type": "status_code", "status_code": {"status_codes": ["ERROR"]}},
                    {"name": "slow", "type": "latency", "latency": {"threshold_ms": slow_trace_ms(config)}},
                    {"name": "baseline", "type": "probabilistic",
                     "probabilistic": {"sampling_percentage": BASELINE_PERCENT}},
                ],
            },
            "batch": {"send_batch_size": 8192, "timeout": "1s"},
        },
        "exporters": {"otlp/jaeger": {"endpoint": opts.jaeger_otlp, "tls": {"insecure": True}}},
        "extensions": {"health_check": {"endpoint": "0.0.0.0:13133"}},
        "service": {
            "extensions": ["health_check"],
            "pipelines": {"traces": {"receivers": ["otlp"],
                                     "processors": ["memory_limiter", "tail_sampling", "batch"],
                                     "exporters": ["otlp/jaeger"]}},
        },
    }


def export_otel_collector(config: Config, opts: ExportOptions) -> list[ExportedFile]:
    """``otel-collector.yaml``."""
    return [ExportedFile("otel-collector.yaml", dump_yaml(collector_config(config, opts)),
                         "OpenTelemetry Collector: OTLP -> tail_sampling -> batch -> Jaeger (OTLP)")]
