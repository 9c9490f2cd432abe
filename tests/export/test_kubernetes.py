"""``export kubernetes``: core resources against Kubernetes' schemas, operator resources against the CRDs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from inferwatch.config import Config, load_config
from inferwatch.export import ExportOptions

from ._helpers import RICH, config_from, exported, run

SCHEMAS = Path(__file__).parent / "schemas"
K8S_VERSION = "1.30"


def _docs(config: Config, name: str) -> list[dict[str, Any]]:
    files = {f.path: f.text for f in exported("kubernetes", config, ExportOptions(namespace="obs"))}
    return list(yaml.safe_load_all(files[name]))


def _closed(schema: Any) -> Any:
    """The schema with unknown fields refused (the API server would silently prune them)."""
    if isinstance(schema, dict):
        out = {k: _closed(v) for k, v in schema.items()}
        if "properties" in out and "additionalProperties" not in out \
                and not out.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [_closed(v) for v in schema]
    return schema


def _validator(schema: dict[str, Any]) -> jsonschema.Draft7Validator:
    # No meta-schema check: a few CRD patterns use Go's inline flags, e.g. '^(?i)(abort|warn)?$'.
    return jsonschema.Draft7Validator(_closed(schema))


@pytest.mark.parametrize("doc", [{}, RICH], ids=["defaults", "rich"])
def test_the_server_resources_validate_against_the_kubernetes_schemas(
        doc: dict[str, Any], tmp_path: Path) -> None:
    resources = _docs(config_from(tmp_path, doc), "inferwatch.yaml")
    assert [r["kind"] for r in resources] == ["Namespace", "ConfigMap", "Deployment", "Service"]
    for r in resources:
        kubernetes_validate.validate(r, K8S_VERSION, strict=True)  # raises ValidationError


def test_a_wrong_field_is_caught_by_the_schema_check() -> None:
    deployment = _docs(Config(), "inferwatch.yaml")[2]
    deployment["spec"]["replica"] = 1
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, K8S_VERSION, strict=True)


def test_the_configmap_holds_a_config_the_pod_serves_on_all_interfaces(tmp_path: Path) -> None:
    cm = _docs(config_from(tmp_path, RICH), "inferwatch.yaml")[1]
    path = tmp_path / "in-pod.yaml"
    path.write_text(cm["data"]["inferwatch.yaml"])
    cfg = load_config(path)
    assert (cfg.server.listen, cfg.server.data_dir) == ("0.0.0.0:9464", "/var/lib/inferwatch")
    assert cfg.server.api_token is not None and cfg.server.api_token.reveal() == "api-token-1"
    assert len(cfg.scrape.targets) == 5


def test_the_deployment_runs_serve_as_non_root_with_readiness_on_ready() -> None:
    pod = _docs(Config(), "inferwatch.yaml")[2]["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["args"] == ["serve", "--config", "/etc/inferwatch/inferwatch.yaml"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert c["readinessProbe"]["httpGet"]["path"] == "/-/ready"


@pytest.mark.parametrize("doc", [{}, RICH], ids=["defaults", "rich"])
def test_the_operator_resources_validate_against_the_vendored_crd_schemas(
        doc: dict[str, Any], tmp_path: Path) -> None:
    resources = _docs(config_from(tmp_path, doc), "prometheus-operator.yaml")
    assert [r["kind"] for r in resources] == ["PrometheusRule", "ServiceMonitor", "PodMonitor"]
    for r in resources:
        schema = json.loads((SCHEMAS / f"monitoring.coreos.com_v1_{r['kind'].lower()}.json").read_text())
        _validator(schema).validate(r)


def test_a_misplaced_operator_field_is_caught() -> None:
    monitor = _docs(Config(), "prometheus-operator.yaml")[2]
    monitor["spec"]["podMetricsEndpoints"][0]["intervall"] = "1m"
    schema = json.loads((SCHEMAS / "monitoring.coreos.com_v1_podmonitor.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        _validator(schema).validate(monitor)


@pytest.mark.tools
def test_the_prometheus_rule_groups_pass_promtool(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    rule = _docs(config_from(tmp_path, RICH), "prometheus-operator.yaml")[0]
    (tmp_path / "r.yml").write_text(yaml.safe_dump({"groups": rule["spec"]["groups"]}))
    proc = run([promtool, "check", "rules", str(tmp_path / "r.yml")])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = {r.get("alert") for g in rule["spec"]["groups"] for r in g["rules"]}
    assert {"ServiceUnavailable", "LatencyOffBaseline", "FeatureDriftRollback"} <= names
