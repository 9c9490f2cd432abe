"""Grafana dashboards (JSON model, schema version 39) and provisioning files.

Each dashboard has a ``datasource`` variable (any Prometheus-compatible data
source: Prometheus, Thanos, Mimir, VictoriaMetrics) and ``job``/``instance``
variables; each panel has a unit and queries through ``${datasource}``.
"""

from __future__ import annotations

from typing import Any

from inferwatch.config import Config
from inferwatch.export._files import ExportedFile, dump_yaml
from inferwatch.export._options import ExportOptions
from inferwatch.export._panels import DashboardSpec, PanelSpec
from inferwatch.model import format_duration

__all__ = ["DASHBOARD_DIR", "SCHEMA_VERSION", "dashboard_json", "provisioning_files"]

SCHEMA_VERSION = 39
DASHBOARD_DIR = "/var/lib/grafana/dashboards/inferwatch"
DATASOURCE_UID = "inferwatch-prometheus"
_DS = {"type": "prometheus", "uid": "${datasource}"}
_WIDTH, _HEIGHT, _PER_ROW = 12, 8, 2
_COLORS = ("green", "yellow", "orange", "red")


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "name": name, "label": label, "type": "query", "datasource": _DS,
        "query": {"query": query, "refId": f"{name}-variable", "qryType": 1},
        "refresh": 2, "includeAll": True, "multi": True, "allValue": ".*", "sort": 1,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]}, "options": [],
        "hide": 0, "regex": "", "skipUrlSync": False,
    }


def _templating() -> dict[str, Any]:
    return {"list": [
        {"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus",
         "current": {}, "options": [], "hide": 0, "refresh": 1, "regex": "", "skipUrlSync": False,
         "includeAll": False, "multi": False},
        _variable("job", "job", "label_values(up, job)"),
        _variable("instance", "instance", 'label_values(up{job=~"$job"}, instance)'),
    ]}


def _thresholds(values: tuple[float, ...]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"color": "green", "value": None}]
    steps += [{"color": _COLORS[min(i + 1, len(_COLORS) - 1)], "value": v} for i, v in enumerate(values)]
    return {"mode": "absolute", "steps": steps}


def _panel(spec: PanelSpec, panel_id: int) -> dict[str, Any]:
    x = (panel_id - 1) % _PER_ROW * _WIDTH
    y = (panel_id - 1) // _PER_ROW * _HEIGHT
    defaults: dict[str, Any] = {"unit": spec.unit, "thresholds": _thresholds(spec.thresholds)}
    if spec.kind == "timeseries" and spec.thresholds:
        defaults["custom"] = {"thresholdsStyle": {"mode": "line"}}
    targets = []
    for i, q in enumerate(spec.queries):
        target: dict[str, Any] = {"refId": chr(ord("A") + i), "datasource": _DS, "expr": q.expr,
                                  "legendFormat": q.legend, "range": spec.kind != "table",
                                  "instant": spec.kind == "table"}
        if spec.kind == "table":
            target["format"] = "table"
        targets.append(target)
    return {
        "id": panel_id, "type": spec.kind, "title": spec.title, "description": spec.description,
        "datasource": _DS, "gridPos": {"h": _HEIGHT, "w": _WIDTH, "x": x, "y": y},
        "fieldConfig": {"defaults": defaults, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                    "tooltip": {"mode": "multi", "sort": "desc"}} if spec.kind == "timeseries" else {},
        "targets": targets,
    }


def dashboard_json(spec: DashboardSpec, refresh: float = 30.0) -> dict[str, Any]:
    """The dashboard JSON model of ``spec`` (importable as is, or provisioned from a file)."""
    return {
        "uid": spec.uid, "title": spec.title, "tags": ["inferwatch"], "timezone": "browser",
        "editable": True, "graphTooltip": 1, "schemaVersion": SCHEMA_VERSION, "version": 1,
        "refresh": format_duration(refresh), "time": {"from": "now-6h", "to": "now"},
        "timepicker": {}, "fiscalYearStartMonth": 0, "liveNow": False, "weekStart": "",
        "links": [{"title": "inferwatch", "type": "dashboards", "tags": ["inferwatch"], "asDropdown": True,
                   "includeVars": True, "keepTime": True, "icon": "external link", "targetBlank": False,
                   "tooltip": "", "url": ""}],
        "annotations": {"list": [{
            "datasource": {"type": "grafana", "uid": "-- Grafana --"}, "enable": True,
            "hide": True, "iconColor": "rgba(0, 211, 255, 1)", "name": "Annotations & Alerts",
            "type": "dashboard"}]},
        "templating": _templating(),
        "panels": [_panel(p, i) for i, p in enumerate(spec.panels, start=1)],
    }


def provisioning_files(config: Config, opts: ExportOptions) -> list[ExportedFile]:
    """Grafana's provisioning: the Prometheus data source and the dashboards' file provider."""
    datasource = {"apiVersion": 1, "datasources": [{
        "name": "Prometheus", "type": "prometheus", "uid": DATASOURCE_UID, "access": "proxy",
        "url": opts.prometheus_url, "isDefault": True, "editable": True,
        "jsonData": {"timeInterval": format_duration(config.server.evaluation_interval)},
    }]}
    provider = {"apiVersion": 1, "providers": [{
        "name": "inferwatch", "orgId": 1, "folder": "inferwatch", "type": "file",
        "disableDeletion": False, "allowUiUpdates": True, "updateIntervalSeconds": 30,
        "options": {"path": DASHBOARD_DIR, "foldersFromFilesStructure": False},
    }]}
    return [
        ExportedFile("provisioning/datasources/inferwatch.yaml", dump_yaml(datasource),
                     "Grafana data source (Prometheus; any compatible URL works)"),
        ExportedFile("provisioning/dashboards/inferwatch.yaml", dump_yaml(provider),
                     f"Grafana dashboard provider reading the JSON files from {DASHBOARD_DIR}"),
    ]
