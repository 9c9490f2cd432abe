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
from inferwatch.export._prometheus import RuleFiles, export_prometheus

__all__ = ["TARGETS", "export"]

Exporter = Callable[[Config, ExportOptions, RuleFiles], list[ExportedFile]]
PlainExporter = Callable[[Config, ExportOptions], list[ExportedFile]]


def _no_rules(fn: PlainExporter) -> Exporter:
    """A target that writes no rule files."""
    return lambda config, opts, _rule_files: fn(config, opts)


# Each target writes into its own sub-directory under ``all``.
TARGETS: dict[str, Exporter] = {
    "prometheus": export_prometheus,
    "alertmanager": _no_rules(export_alertmanager),
    "grafana": _no_rules(export_grafana),
    "otel-collector": _no_rules(export_otel_collector),
    "kubernetes": export_kubernetes,
}
_NEEDS_RULES = ("prometheus", "kubernetes", "all")


def export(target: str, config: Config, opts: ExportOptions | None = None,
           rule_files: RuleFiles | None = None) -> list[ExportedFile]:
    """The files of one target (``all``: every target, each under its own directory).

    ``rule_files``: the Prometheus rule documents by path, which the prometheus and
    kubernetes targets write (``inferwatch.server.prometheus_rule_files(config)``).
    """
    opts = opts or ExportOptions()
    if target not in (*TARGETS, "all"):
        raise ValueError(f"unknown export target {target!r} (known: {', '.join([*TARGETS, 'all'])})")
    if rule_files is None:
        if target in _NEEDS_RULES:
            raise ValueError(f"the {target} export needs the rule files "
                             "(inferwatch.server.prometheus_rule_files(config))")
        rule_files = {}
    if target == "all":
        return [ExportedFile(f"{name}/{f.path}", f.text, f.purpose, f.secret)
                for name, fn in TARGETS.items() for f in fn(config, opts, rule_files)]
    return TARGETS[target](config, opts, rule_files)
