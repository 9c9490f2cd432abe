"""Helpers of the export tests: export a config into a temporary directory, run a checker."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import yaml

from inferwatch.config import Config, load_config
from inferwatch.export import ExportedFile, ExportOptions, export, write_files
from inferwatch.server import prometheus_rule_files


def config_from(tmp_path: Path, doc: dict[str, Any]) -> Config:
    """A config loaded from ``doc`` written as YAML (so the loader's checks apply)."""
    path = tmp_path / "inferwatch.yaml"
    path.write_text(yaml.safe_dump(doc))
    return load_config(path)


def exported(target: str, config: Config, opts: ExportOptions | None = None) -> list[ExportedFile]:
    """``target``'s files, with the rule files built as ``inferwatch export`` builds them."""
    return export(target, config, opts, prometheus_rule_files(config))


def export_to(tmp_path: Path, target: str, config: Config | None = None,
              opts: ExportOptions | None = None) -> Path:
    """Write ``target``'s files under ``tmp_path/out`` and return that directory."""
    out = tmp_path / "out"
    write_files(exported(target, config or Config(), opts), out)
    return out


# Values Grafana substitutes for the dashboards' variables before a query reaches Prometheus.
PD_KEY = "0123456789abcdef0123456789abcdef"  # PagerDuty integration keys are 32 characters
_VARS = {"$__rate_interval": "1m", "$job": ".*", "$instance": ".*"}


def interpolate(expr: str) -> str:
    """A dashboard query as Grafana sends it (variables replaced)."""
    return re.sub(r"\$__rate_interval|\$job|\$instance", lambda m: _VARS[m.group(0)], expr)


def dashboard_targets() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(file, panel, target) of every query of the exported dashboards."""
    for f in export("grafana", Config()):
        if f.path.endswith(".json"):
            for p in json.loads(f.text)["panels"]:
                for t in p["targets"]:
                    yield f.path, p, t


def run(argv: Sequence[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run a checker; the caller asserts on the return code with the output as message."""
    return subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


# A config that exercises every part of the exports: targets of several dimensions
# (two with the same job), each receiver type, a nested route tree with continue and
# group_by '...', a dynamic rule with a fallback.
RICH: dict[str, Any] = {
    "server": {"api_token": "api-token-1", "evaluation_interval": "30s"},
    "scrape": {"targets": [
        {"job": "ranker", "url": "http://10.0.0.1:8000/metrics", "dimension": "service"},
        {"job": "ranker", "url": "http://10.0.0.2:8000/metrics", "dimension": "service"},
        {"job": "ranker", "url": "http://10.0.0.3:9000/custom?format=text", "dimension": "service",
         "interval": "30s", "labels": {"zone": "b"}},
        {"job": "node", "url": "http://10.0.0.1:9100/metrics", "dimension": "infrastructure"},
        {"job": "drift", "url": "https://10.0.0.4:8443/metrics", "dimension": "quality"},
    ]},
    "rules": {"rules": [
        {"name": "LatencyOffBaseline", "dimension": "service", "tier": "P2", "signal": "p99_latency",
         "threshold": "dynamic", "dynamic": {"fallback": 2.0, "direction": "above"}},
    ]},
    "alerting": {
        "receivers": [
            {"name": "phone", "type": "pagerduty", "routing_key": PD_KEY, "url": "http://127.0.0.1:1"},
            {"name": "wecom", "type": "wecom", "key": "robot-key"},
            {"name": "mail", "type": "email", "smarthost": "smtp.example.org:587", "to": ["ops@example.org"],
             "username": "u", "password": "p", "starttls": True},
            {"name": "chat", "type": "slack", "webhook_url": "https://hooks.example.org/T/B/x"},
            {"name": "hook", "type": "webhook", "url": "http://127.0.0.1:2/hook", "bearer_token": "t"},
            {"name": "calls", "type": "twilio", "account_sid": "AC1", "auth_token": "x",
             "from": "+100", "to": ["+200"]},
        ],
        "route": {"receiver": "terminal", "group_by": ["alertname", "service"], "routes": [
            {"matchers": ['tier="P0"'], "receiver": "phone", "continue": True},
            {"matchers": ['tier="P0"', 'service="ranker"'], "receiver": "calls"},
            {"matchers": ['tier="P1"'], "receiver": "wecom", "group_wait": "10s", "routes": [
                {"matchers": ['dimension="quality"'], "receiver": "mail", "group_by": ["..."]},
            ]},
            {"matchers": ['tier="P2"', 'dimension=~"business|quality"'], "receiver": "chat"},
            {"matchers": ['tier="P2"'], "receiver": "digest", "repeat_interval": "24h"},
            {"matchers": ['team="platform"'], "receiver": "hook"},
        ]},
        "external_labels": {"cluster": "eu-1"},
        "alertmanagers": [{"url": "http://10.0.0.9:9093"}, {"url": "https://am.example.org/team"}],
    },
}
