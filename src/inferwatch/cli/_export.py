"""``inferwatch export TARGET -o DIR``: the config as files for Prometheus, Alertmanager, Grafana, ..."""

from __future__ import annotations

import argparse
from typing import Any

from inferwatch.cli._common import add_config_arg

__all__ = ["add_parser"]

_TARGETS = ("prometheus", "alertmanager", "grafana", "otel-collector", "kubernetes", "all")
_WHAT = """\
targets:
  prometheus      prometheus.yml (scrape jobs, rule_files, alertmanagers, remote_write) and rules/*.rules.yml
                  (every rule; dynamic baselines as recording rules plus their alert)
  alertmanager    alertmanager.yml (routes, timers, inhibit rules, receivers: PagerDuty, e-mail,
                  Slack, webhook natively; WeCom robot and app, DingTalk, Feishu, Aliyun/Tencent
                  voice and SMS, digest, terminal and the actions through
                  inferwatch's /api/v1/alertmanager) and inferwatch-behind-alertmanager.yaml
                  (the config of that receiving inferwatch server)
  grafana         dashboards/*.json (service, infrastructure/GPU, quality/drift, business, alerts)
                  and provisioning/ (data source, dashboard provider)
  otel-collector  otel-collector.yaml (OTLP in, tail sampling, batch, OTLP out to Jaeger)
  kubernetes      inferwatch.yaml (Namespace, ConfigMap, Deployment, Service) and
                  prometheus-operator.yaml (PrometheusRule, ServiceMonitor, PodMonitor)
  all             every target, each in its own sub-directory of DIR

Files holding secrets from the config (alertmanager.yml, the ConfigMap) are written with mode 0600.
"""


def add_parser(sub: Any) -> None:
    """Register ``export``."""
    p: argparse.ArgumentParser = sub.add_parser(
        "export", help="write Prometheus, Alertmanager, Grafana, OTel Collector or Kubernetes files",
        description="Turn the inferwatch config (the built-in defaults without --config) into the "
        "files of the engines that scale past one machine.",
        epilog=_WHAT, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("target", choices=_TARGETS, metavar="TARGET", help=", ".join(_TARGETS))
    add_config_arg(p)
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="directory to write into")
    p.add_argument("--inferwatch-url", default="", metavar="URL",
                   help="the inferwatch server Alertmanager posts to and Prometheus scrapes "
                   "(default: server.external_url, else http://server.listen)")
    p.add_argument("--alertmanager", default="127.0.0.1:9093", metavar="HOST:PORT",
                   help="Alertmanager that Prometheus sends alerts to (default %(default)s)")
    p.add_argument("--prometheus-url", default="http://127.0.0.1:9090", metavar="URL",
                   help="Prometheus that Grafana queries (default %(default)s)")
    p.add_argument("--jaeger", default="127.0.0.1:4317", metavar="HOST:PORT",
                   help="Jaeger's OTLP gRPC endpoint for the collector (default %(default)s)")
    p.add_argument("--remote-write", action="append", default=[], metavar="URL",
                   help="a remote_write URL for prometheus.yml (Thanos receive, Mimir, VictoriaMetrics), "
                   "after the config's server.remote_write; repeatable")
    p.add_argument("--namespace", default="monitoring", help="Kubernetes namespace (default %(default)s)")
    p.add_argument("--image", default="inferwatch:0.1.0", help="container image (default %(default)s)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from inferwatch._exceptions import InputError
    from inferwatch.config import load_config
    from inferwatch.export import ExportOptions, export, write_files
    from inferwatch.server import prometheus_rule_files

    opts = ExportOptions(inferwatch_url=args.inferwatch_url, alertmanager=args.alertmanager,
                         prometheus_url=args.prometheus_url, jaeger_otlp=args.jaeger,
                         namespace=args.namespace, image=args.image,
                         remote_write=tuple(args.remote_write))
    try:
        config = load_config(args.config)
        files = export(args.target, config, opts, prometheus_rule_files(config))
    except ValueError as exc:
        raise InputError(f"export {args.target}: {exc}") from None
    for f, path in zip(files, write_files(files, args.output), strict=True):
        print(f"{path}  {f.purpose}")
    return 0
