"""``inferwatch export grafana``: the dashboards (the SLO one when SLOs are configured) and provisioning."""

from __future__ import annotations

from inferwatch.config import Config
from inferwatch.export._files import ExportedFile, dump_json
from inferwatch.export._grafana import dashboard_json, provisioning_files
from inferwatch.export._options import ExportOptions
from inferwatch.export._panels import DASHBOARDS
from inferwatch.export._slo_dashboard import SLO_DASHBOARD, slo_dashboard_json

__all__ = ["export_grafana"]


def export_grafana(config: Config, opts: ExportOptions) -> list[ExportedFile]:
    """``dashboards/*.json`` and ``provisioning/``."""
    files = [ExportedFile(f"dashboards/{d.uid}.json", dump_json(dashboard_json(d)), f"dashboard {d.title}")
             for d in DASHBOARDS]
    if config.slos or config.slo_files:  # Sloth's series: budget, SLI, burn rate per window
        files.append(ExportedFile(f"dashboards/{SLO_DASHBOARD.uid}.json", dump_json(slo_dashboard_json()),
                                  f"dashboard {SLO_DASHBOARD.title}"))
    return files + provisioning_files(config, opts)
