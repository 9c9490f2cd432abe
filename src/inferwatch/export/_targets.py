"""The export targets by name, and ``all``."""

from __future__ import annotations

from collections.abc import Callable

from inferwatch.config import Config
from inferwatch.export._alertmanager import export_alertmanager
from inferwatch.export._files import ExportedFile
from inferwatch.export._grafana_export import export_grafana
from inferwatch.export._kubernetes import export_kubernetes
from inferwatch.export._options import ExportOptions
from inferwatch.export._otel import export_otel_collector
from inferwatch.export._prometheus import export_prometheus

__all__ = ["TARGETS", "export"]

Exporter = Callable[[Config, ExportOptions], list[ExportedFile]]

# Each target writes into its own sub-directory under ``all``.
TARGETS: dict[str, Exporter] = {
    "prometheus": export_prometheus,
    "alertmanager": export_alertmanager,
    "grafana": export_grafana,
    "otel-collector": export_otel_collector,
    "kubernetes": export_kubernetes,
}


def export(target: str, config: Config, opts: ExportOptions | None = None) -> list[ExportedFile]:
    """The files of one target (``all``: every target, each under its own directory)."""
    opts = opts or ExportOptions()
    if target == "all":
        return [ExportedFile(f"{name}/{f.path}", f.text, f.purpose, f.secret)
                for name, fn in TARGETS.items() for f in fn(config, opts)]
    if target not in TARGETS:
        raise ValueError(f"unknown export target {target!r} (known: {', '.join([*TARGETS, 'all'])})")
    return TARGETS[target](config, opts)
