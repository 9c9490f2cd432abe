"""``export otel-collector``: OTLP -> tail_sampling -> batch -> OTLP to Jaeger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from inferwatch.config import Config
from inferwatch.export import ExportOptions, export

from ._helpers import config_from

# The policy types of the contrib tail_sampling processor (its README).
POLICY_TYPES = {"always_sample", "latency", "numeric_attribute", "probabilistic", "status_code",
                "string_attribute", "trace_state", "rate_limiting", "span_count", "boolean_attribute",
                "ottl_condition", "and", "composite", "drop"}


def _collector(config: Config) -> dict[str, Any]:
    (f,) = export("otel-collector", config, ExportOptions(jaeger_otlp="jaeger:4317"))
    return yaml.safe_load(f.text)


def test_the_traces_pipeline_is_otlp_tail_sampling_batch_jaeger() -> None:
    doc = _collector(Config())
    pipe = doc["service"]["pipelines"]["traces"]
    assert pipe == {"receivers": ["otlp"], "processors": ["memory_limiter", "tail_sampling", "batch"],
                    "exporters": ["otlp/jaeger"]}
    for kind in ("receivers", "processors", "exporters"):
        assert set(pipe[kind]) <= set(doc[kind]), kind  # every component used is defined
    assert set(doc["service"]["extensions"]) <= set(doc["extensions"])
    assert doc["exporters"]["otlp/jaeger"]["endpoint"] == "jaeger:4317"
    assert set(doc["receivers"]["otlp"]["protocols"]) == {"grpc", "http"}


def test_tail_sampling_keeps_errors_and_traces_slower_than_the_latency_rule(tmp_path: Path) -> None:
    policies = {p["name"]: p for p in _collector(Config())["processors"]["tail_sampling"]["policies"]}
    assert {p["type"] for p in policies.values()} <= POLICY_TYPES
    assert policies["errors"]["status_code"] == {"status_codes": ["ERROR"]}
    assert policies["slow"]["latency"]["threshold_ms"] == 500  # HighP99Latency's 0.5 s
    tighter = config_from(tmp_path, {"rules": {"rules": [
        {"name": "HighP99Latency", "dimension": "service", "tier": "P2", "signal": "p99_latency",
         "threshold": 0.25}]}})
    policies = _collector(tighter)["processors"]["tail_sampling"]["policies"]
    slow = next(p for p in policies if p["name"] == "slow")
    assert slow["latency"]["threshold_ms"] == 250
