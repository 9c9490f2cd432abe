"""The SLO dashboard for Grafana: budget left, SLI, burn rate per window, alerts, on Sloth's series.

It reads only what the SLO rules record (``slo:*``, ``sloth_slo_info``, Sloth's
names), so it also shows SLOs that Sloth itself generated; ``service`` and
``slo`` variables come from ``sloth_slo_info``.
"""

from __future__ import annotations

from typing import Any

from inferwatch.export._grafana import dashboard_json
from inferwatch.export._panels import DashboardSpec, PanelSpec, Query

__all__ = ["SLO_DASHBOARD", "slo_dashboard_json"]

_SEL = 'sloth_service=~"$service",sloth_slo=~"$slo"'
_BUDGET = f"slo:error_budget:ratio{{{_SEL}}}"


def _burn(window: str) -> str:
    return (f"slo:sli_error:ratio_rate{window}{{{_SEL}}} / on (sloth_id, sloth_slo, sloth_service) "
            f"group_left () {_BUDGET}")


SLO_DASHBOARD = DashboardSpec("inferwatch-slo", "inferwatch / SLOs and error budgets", (
    PanelSpec("Error budget left over the period", "percentunit", (
        Query(f"slo:period_error_budget_remaining:ratio{{{_SEL}}}", "{{sloth_id}}"),),
        "1 - (the period's error ratio / the budget); below 0 the budget is spent", thresholds=(0.0,)),
    PanelSpec("SLI over 5 minutes", "percentunit", (
        Query(f"1 - slo:sli_error:ratio_rate5m{{{_SEL}}}", "{{sloth_id}}"),
        Query(f"slo:objective:ratio{{{_SEL}}}", "{{sloth_id}} objective"))),
    PanelSpec("Burn rate by window", "none", tuple(
        Query(_burn(w), "{{sloth_id}} " + w) for w in ("5m", "1h", "6h", "3d")),
        "fast page: 1h and 5m over 14.4; slow page: 6h and 30m over 6; ticket: 1d and 2h over 3, "
        "or 3d and 6h over 1", thresholds=(1.0, 3.0, 6.0, 14.4)),
    PanelSpec("Burn rate now (5m) and over the period", "none", (
        Query(f"slo:current_burn_rate:ratio{{{_SEL}}}", "{{sloth_id}} now"),
        Query(f"slo:period_burn_rate:ratio{{{_SEL}}}", "{{sloth_id}} period")), thresholds=(1.0,)),
    PanelSpec("Burn-rate alerts firing", "none", (
        Query(f'count by (alertname, slo_alert) (ALERTS{{alertstate="firing",{_SEL}}})',
              "{{alertname}} ({{slo_alert}})"),)),
    PanelSpec("Objectives", "percentunit", (
        Query(f"slo:objective:ratio{{{_SEL}}}", "{{sloth_id}}"),), kind="table"),
))


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {"name": name, "label": label, "type": "query",
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "query": {"query": query, "refId": f"{name}-variable", "qryType": 1},
            "refresh": 2, "includeAll": True, "multi": True, "allValue": ".*", "sort": 1,
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "options": [],
            "hide": 0, "regex": "", "skipUrlSync": False}


def slo_dashboard_json() -> dict[str, Any]:
    """The dashboard JSON model, with ``service`` and ``slo`` variables instead of job and instance."""
    doc = dashboard_json(SLO_DASHBOARD)
    datasource = doc["templating"]["list"][0]
    doc["templating"] = {"list": [
        datasource,
        _variable("service", "service", "label_values(sloth_slo_info, sloth_service)"),
        _variable("slo", "SLO", 'label_values(sloth_slo_info{sloth_service=~"$service"}, sloth_slo)'),
    ]}
    doc["time"] = {"from": "now-7d", "to": "now"}
    return doc
