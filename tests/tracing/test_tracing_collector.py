"""The OpenTelemetry Collector config carries the service's tail-sampling policies."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from tests._require import require_tool

from inferwatch.tracing import collector_config, collector_yaml


def test_policies_match_the_service_and_pipeline_is_wired() -> None:
    cfg = yaml.safe_load(collector_yaml(sample_ratio=0.05, slow_threshold_s=0.75,
                                        inferwatch="http://inferwatch:9464/"))
    policies = {p["name"]: p for p in cfg["processors"]["tail_sampling"]["policies"]}
    assert policies["errors"]["status_code"] == {"status_codes": ["ERROR"]}
    assert policies["slow"]["latency"] == {"threshold_ms": 750}
    assert policies["rest"]["probabilistic"] == {"sampling_percentage": 5.0}
    pipeline = cfg["service"]["pipelines"]["traces"]
    assert pipeline["processors"] == ["tail_sampling", "batch"]  # sample before batching
    assert pipeline["exporters"] == ["otlp/jaeger", "otlphttp/inferwatch"]
    assert set(pipeline["exporters"]) == set(cfg["exporters"])
    assert cfg["exporters"]["otlphttp/inferwatch"]["endpoint"] == "http://inferwatch:9464"
    with pytest.raises(ValueError, match="sample_ratio"):
        collector_config(sample_ratio=2.0)


def test_otelcol_validates_the_config(tmp_path: Path) -> None:
    # Not a `tools` test: no registry reachable here ships the Collector (Debian has none), so CI
    # cannot be made to have it; it runs where `otelcol-contrib` is on the PATH.
    otelcol = require_tool("otelcol-contrib", ci_has_it=False)  # not packaged by Debian or PyPI
    path = tmp_path / "otelcol.yaml"
    path.write_text(collector_yaml())
    out = subprocess.run([otelcol, "validate", f"--config={path}"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
