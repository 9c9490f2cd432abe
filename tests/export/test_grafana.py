"""``export grafana``: dashboards valid for Grafana's model, every query parses, every panel has a unit."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as gf_dashboard
from grafana_foundation_sdk.models import units as gf_units
from tests._require import require_module

from inferwatch.config import Config
from inferwatch.export import export

from ._helpers import dashboard_targets, export_to, interpolate, run

UNITS = {v for k, v in vars(gf_units).items() if not k.startswith("_") and isinstance(v, str)}


def _dashboards() -> dict[str, dict[str, Any]]:
    return {f.path: json.loads(f.text) for f in export("grafana", Config()) if f.path.endswith(".json")}


def _targets() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    return dashboard_targets()


def test_the_dashboards_cover_the_four_dimensions_alerts_drift_and_gpu() -> None:
    titles = {d["title"] for d in _dashboards().values()}
    assert titles == {"inferwatch / service", "inferwatch / infrastructure", "inferwatch / GPU",
                      "inferwatch / model quality and drift", "inferwatch / business",
                      "inferwatch / alerts by tier", "inferwatch / generative (LLM)"}
    drift = next(d for d in _dashboards().values() if "drift" in d["title"])
    assert any("inferwatch_feature_psi{" in t["expr"] and "{{feature}}" in t["legendFormat"]
               for p in drift["panels"] for t in p["targets"])


def test_every_dashboard_has_the_datasource_job_and_instance_variables() -> None:
    for path, d in _dashboards().items():
        variables = {v["name"]: v for v in d["templating"]["list"]}
        assert list(variables) == ["datasource", "job", "instance"], path
        ds = variables["datasource"]
        assert (ds["type"], ds["query"]) == ("datasource", "prometheus")
        assert variables["instance"]["query"]["query"] == 'label_values(up{job=~"$job"}, instance)'


def test_every_panel_has_a_known_unit_and_queries_through_the_datasource_variable() -> None:
    for path, p, t in _targets():
        assert p["fieldConfig"]["defaults"]["unit"] in UNITS, (path, p["title"])
        assert p["datasource"] == t["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


def test_every_rate_uses_rate_interval_and_every_selector_the_job_and_instance() -> None:
    for path, p, t in _targets():
        windows = re.findall(r"\[([^\]]+)\]", t["expr"])
        assert all(w == "$__rate_interval" for w in windows), (path, p["title"])
        if "ALERTS" not in t["expr"]:
            assert 'job=~"$job",instance=~"$instance"' in t["expr"], (path, p["title"])


def test_every_query_parses_with_a_full_promql_parser() -> None:
    promql_parser = require_module("promql_parser")
    for _, _, t in _targets():
        promql_parser.parse(interpolate(t["expr"]))  # raises on a syntax error


def _missing(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Paths of ``ours`` that the model dropped or changed (it may add defaults of its own)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [m for k, v in ours.items()
                for m in ([f"{where}.{k}"] if k not in theirs else _missing(v, theirs[k], f"{where}.{k}"))]
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [m for i, (a, b) in enumerate(zip(ours, theirs, strict=True))
                for m in _missing(a, b, f"{where}[{i}]")]
    return [] if ours == theirs else [where]


def test_the_dashboards_survive_grafanas_dashboard_model() -> None:
    # The foundation SDK's model (generated from Grafana's schema) keeps only the fields the
    # schema defines: anything misspelt or misplaced would be dropped.
    for path, d in _dashboards().items():
        back = json.loads(json.dumps(gf_dashboard.Dashboard.from_json(d), cls=JSONEncoder))
        assert _missing(d, back) == [], path
        assert len({p["id"] for p in d["panels"]}) == len(d["panels"])


def test_provisioning_points_the_provider_at_the_dashboards_and_the_datasource_at_prometheus() -> None:
    files = {f.path: yaml.safe_load(f.text) for f in export("grafana", Config()) if f.path.endswith(".yaml")}
    (ds,) = files["provisioning/datasources/inferwatch.yaml"]["datasources"]
    assert (ds["type"], ds["url"], ds["access"]) == ("prometheus", "http://127.0.0.1:9090", "proxy")
    (provider,) = files["provisioning/dashboards/inferwatch.yaml"]["providers"]
    assert provider["type"] == "file" and provider["options"]["path"].endswith("/inferwatch")


@pytest.mark.tools
def test_promtool_parses_every_dashboard_query(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    # Prometheus 2.42's own parser, through a rule file made of the interpolated queries.
    promtool = require_tool("promtool")
    rules = [{"record": f"dashboard:query{i}", "expr": interpolate(t["expr"])}
             for i, (_, _, t) in enumerate(_targets())]
    (tmp_path / "q.yml").write_text(yaml.safe_dump({"groups": [{"name": "q", "rules": rules}]}))
    proc = run([promtool, "check", "rules", str(tmp_path / "q.yml")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(rules)} rules found" in proc.stdout
    assert export_to(tmp_path, "grafana").is_dir()


def test_the_llm_dashboard_has_what_an_llm_team_reads() -> None:
    # issue 40 #4: TTFT, TPOT, tokens/s, queue, running/waiting, goodput, finish reasons, token lengths,
    # KV and prefix cache, preemptions, cost per request by tenant
    llm = next(d for d in _dashboards().values() if d["title"] == "inferwatch / generative (LLM)")
    exprs = " ".join(t["expr"] for p in llm["panels"] for t in p["targets"])
    for name in ("time_to_first_token_seconds_bucket", "time_per_output_token_seconds_bucket",
                 "generation_output_tokens_total", "queue_duration_seconds_bucket", "engine_requests_running",
                 "engine_requests_waiting", "good_requests_total", "finish_reasons_total",
                 "request_input_tokens_bucket", "request_output_tokens_bucket", "kv_cache_usage_ratio",
                 "prefix_cache_hits_total", "engine_preemptions_total", "generation_cost_total"):
        assert f"inferwatch_{name}" in exprs or name in exprs, name
    titles = [p["title"] for p in llm["panels"]]
    assert titles[:2] == ["Time to first token P50 / P99", "Time per output token P50 / P99"]
