"""``export prometheus|kubernetes|grafana`` with SLOs: the rule file, the PrometheusRule, the dashboard."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import dashboard as gf_dashboard

from inferwatch.config import parse_config
from inferwatch.export import export
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.rules import Evaluator, QueryEngine, parse_promql
from inferwatch.server import prometheus_rule_files
from inferwatch.slo import load_rule_set
from inferwatch.store import MemoryStore

CONFIG = parse_config("slos: [{service: ranker, type: availability, objective: 99.9},\n"
                      "       {service: ranker, type: latency, objective: 99, threshold: 0.5}]")


def _dashboard() -> dict[str, Any]:
    files = {f.path: f for f in export("grafana", CONFIG)}
    return dict(json.loads(files["dashboards/inferwatch-slo.json"].text))


def _exprs() -> list[str]:
    return [t["expr"].replace("$service", ".*").replace("$slo", ".*")
            for p in _dashboard()["panels"] for t in p["targets"]]


def test_the_rule_file_and_the_prometheus_rule_hold_the_slo_groups() -> None:
    files = {f.path: f for f in export("prometheus", CONFIG, rule_files=prometheus_rule_files(CONFIG))}
    doc = yaml.safe_load(files["rules/slo.rules.yml"].text)
    names = [g["name"] for g in doc["groups"]]
    # every recording group before the alert groups: alerts read what was recorded at the same time
    assert names == [f"sloth-slo-{kind}-ranker-{slo}" for kind, slo in (
        ("sli-recordings", "availability"), ("meta-recordings", "availability"),
        ("sli-recordings", "latency-500ms"), ("meta-recordings", "latency-500ms"),
        ("alerts", "availability"), ("alerts", "latency-500ms"))]
    static = yaml.safe_load(files["rules/inferwatch.rules.yml"].text)
    assert not any(r["alert"].startswith("SLO") for g in static["groups"] for r in g["rules"])
    k8s = {f.path: f for f in export("kubernetes", CONFIG, rule_files=prometheus_rule_files(CONFIG))}
    operator = [d for d in yaml.safe_load_all(k8s["prometheus-operator.yaml"].text)
        if d["kind"] == "PrometheusRule"]
    assert set(names) <= {g["name"] for g in operator[0]["spec"]["groups"]}
    assert "dashboards/inferwatch-slo.json" not in {f.path for f in export("grafana", parse_config(""))}


def test_the_slo_dashboard_survives_grafanas_model() -> None:
    d = _dashboard()
    back = json.loads(json.dumps(gf_dashboard.Dashboard.from_json(d), cls=JSONEncoder))
    assert back["title"] == "inferwatch / SLOs and error budgets"
    assert [v["name"] for v in d["templating"]["list"]] == ["datasource", "service", "slo"]


def test_every_dashboard_query_finds_data_once_the_rules_ran() -> None:
    # 20 minutes of 30 % errors through the SLO rules, then each panel's query at the end.
    rs = load_rule_set(CONFIG)
    store = MemoryStore()
    ok = Labels({"__name__": "inferwatch_requests_total", "service": "ranker", "code": "200"})
    bad = Labels({"__name__": "inferwatch_requests_total", "service": "ranker", "code": "500"})
    store.append([s for i in range(21)
                  for s in (Sample(ok, i * 60.0, 420.0 * i), Sample(bad, i * 60.0, 180.0 * i))])
    ev = Evaluator(rs.alerts, store, clock=SimulatedClock(0), recordings=rs.recordings)
    for i in range(21):
        ev.evaluate(i * 60.0)
    engine = QueryEngine(store)
    for expr in _exprs():
        if "ALERTS" in expr:  # Prometheus's own series: inferwatch does not store ALERTS
            continue
        res = engine.instant(parse_promql(expr), 1200.0)
        assert isinstance(res, list) and res, expr
    burn = engine.instant(parse_promql('slo:current_burn_rate:ratio{sloth_id="ranker-availability"}'), 1200.0)
    assert isinstance(burn, list) and burn[0][1] == pytest.approx(300.0)  # 30 % errors / 0.1 % budget


@pytest.mark.tools
def test_promtool_parses_every_slo_dashboard_query(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    rules = [{"record": f"dashboard:query{i}", "expr": e} for i, e in enumerate(_exprs())]
    (tmp_path / "q.yml").write_text(yaml.safe_dump({"groups": [{"name": "q", "rules": rules}]}))
    proc = subprocess.run([promtool, "check", "rules", str(tmp_path / "q.yml")], capture_output=True,
                          text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
