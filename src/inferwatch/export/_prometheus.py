"""``prometheus.yml`` and the rule files: the embedded server's scrape and rules on Prometheus.

Static rules (default pack, quality and business monitors included) go to
``rules/inferwatch.rules.yml``, written by the same function that the replay
tests check against ``promtool test rules``. A dynamic rule becomes the
seasonal baseline's recording rules and an alert with the rule's name, labels
and annotations (``rules/baseline-<rule>.rules.yml``); its fixed fallback
applies while the band has too little history, as in the embedded evaluator.
``server.remote_write`` becomes ``remote_write`` (:mod:`inferwatch.export._remote_write`).
The SLOs (``slos``, ``slo_files``) become Sloth's recording and alert groups
in ``rules/slo.rules.yml``. The rule documents are built by the caller
(``inferwatch.server.prometheus_rule_files``) and written here as they are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, urlsplit

from inferwatch.config import Config, ScrapeTarget
from inferwatch.export._blackbox import blackbox_config, blackbox_jobs
from inferwatch.export._files import ExportedFile, dump_yaml
from inferwatch.export._options import ExportOptions
from inferwatch.export._remote_write import has_secrets, remote_write_configs
from inferwatch.model import DEFAULT_INTERVAL_S, Dimension, format_duration

__all__ = ["RULES_DIR", "RuleFiles", "export_prometheus", "prometheus_config"]

# The rule files by path under the export (``rules/….rules.yml``), each a Prometheus rule
# document; built by the caller (``inferwatch.server.prometheus_rule_files``): the bands'
# and the SLOs' rules come from packages above export in the table.
RuleFiles = Mapping[str, Mapping[str, Any]]
RULES_DIR = "rules"
SELF_JOB = "inferwatch"


def _d(seconds: float) -> str:
    return format_duration(seconds)


def _job_settings(t: ScrapeTarget) -> tuple[Any, ...]:
    u = urlsplit(t.url)
    return (t.job, t.effective_interval, t.effective_timeout, u.scheme, u.path or "/metrics",
            u.query, t.honor_labels, t.honor_timestamps)


def _scrape_job(name: str, targets: Sequence[ScrapeTarget]) -> dict[str, Any]:
    first = targets[0]
    u = urlsplit(first.url)
    job: dict[str, Any] = {
        "job_name": name,
        "scrape_interval": _d(first.effective_interval),
        "scrape_timeout": _d(first.effective_timeout),
        "metrics_path": u.path or "/metrics",
        "scheme": u.scheme,
    }
    if u.query:
        job["params"] = {k: v for k, v in parse_qs(u.query).items()}
    if first.honor_labels:
        job["honor_labels"] = True
    if not first.honor_timestamps:
        job["honor_timestamps"] = False
    static = []
    for t in targets:
        labels = {"job": t.job, "dimension": t.dimension.value, **t.labels}
        static.append({"targets": [urlsplit(t.url).netloc], "labels": labels})
    job["static_configs"] = static
    return job


def _scrape_configs(config: Config, opts: ExportOptions) -> list[dict[str, Any]]:
    """One job per distinct (job, interval, timeout, URL shape); the ``job`` label stays the config's."""
    groups: dict[tuple[Any, ...], list[ScrapeTarget]] = {}
    for t in config.scrape.targets:
        groups.setdefault(_job_settings(t), []).append(t)
    jobs: list[dict[str, Any]] = []
    used: set[str] = set()
    for targets in groups.values():
        name, n = targets[0].job, 2
        while name in used or name == SELF_JOB:
            name, n = f"{targets[0].job}-{n}", n + 1
        used.add(name)
        jobs.append(_scrape_job(name, targets))
    server = urlsplit(opts.server_url(config))
    interval = DEFAULT_INTERVAL_S[Dimension.INFRASTRUCTURE]
    jobs.insert(0, {
        "job_name": SELF_JOB, "scrape_interval": _d(interval), "scrape_timeout": _d(min(10.0, interval)),
        "scheme": server.scheme, "metrics_path": "/metrics",
        "static_configs": [{"targets": [server.netloc]}],
    })
    return jobs + blackbox_jobs(config, opts)  # the probes, through a blackbox_exporter


def _alertmanagers(config: Config, opts: ExportOptions) -> list[dict[str, Any]]:
    """The config's ``alerting.alertmanagers`` (grouped by scheme and path), else ``opts.alertmanager``."""
    if not config.alerting.alertmanagers:
        return [{"static_configs": [{"targets": [opts.alertmanager]}]}]
    groups: dict[tuple[str, str], list[str]] = {}
    for am in config.alerting.alertmanagers:
        u = urlsplit(am.url)
        groups.setdefault((u.scheme, u.path or "/"), []).append(u.netloc)
    return [{"scheme": scheme, "path_prefix": path, "static_configs": [{"targets": targets}]}
            for (scheme, path), targets in groups.items()]


def prometheus_config(config: Config, opts: ExportOptions) -> dict[str, Any]:
    """``prometheus.yml`` as a dict."""
    glob: dict[str, Any] = {
        "scrape_interval": _d(DEFAULT_INTERVAL_S[Dimension.SERVICE]),
        "evaluation_interval": _d(config.server.evaluation_interval),
    }
    if config.alerting.external_labels:
        glob["external_labels"] = dict(config.alerting.external_labels)
    out: dict[str, Any] = {
        "global": glob,
        "rule_files": [f"{RULES_DIR}/*.rules.yml"],
        "alerting": {"alertmanagers": _alertmanagers(config, opts)},
        "scrape_configs": _scrape_configs(config, opts),
    }
    remotes = remote_write_configs(config, opts)  # the server's receivers, the --remote-write URLs
    if remotes:  # long-term storage behind Prometheus: Thanos receive, Mimir, VictoriaMetrics
        out["remote_write"] = remotes
    return out


_PURPOSE = {"inferwatch.rules.yml": "alerting rules with fixed thresholds, one group per dimension",
            "slo.rules.yml": "SLOs: Sloth's recording rules and burn-rate alerts"}
_BASELINE_PURPOSE = "a dynamic baseline: band recording rules and the rule's alert"


def export_prometheus(config: Config, opts: ExportOptions, rule_files: RuleFiles) -> list[ExportedFile]:
    """``prometheus.yml`` and ``rules/*.rules.yml`` (``rule_files``)."""
    files = [ExportedFile("prometheus.yml", dump_yaml(prometheus_config(config, opts)),
                          "Prometheus: scrape jobs per target and dimension, rule files, Alertmanager, "
                          "remote_write", secret=has_secrets(config))]
    modules = blackbox_config(config)
    if modules["modules"]:  # headers may hold secrets: written 0600 like the files with receivers
        files.append(ExportedFile("blackbox.yml", dump_yaml(modules),
                                  "blackbox_exporter: an http module per probe (golden sets stay with serve)",
                                  secret=any(p.headers for p in config.probes)))
    for path, doc in rule_files.items():
        what = _PURPOSE.get(path.rsplit("/", 1)[-1], _BASELINE_PURPOSE)
        files.append(ExportedFile(path, dump_yaml(doc), what))
    return files
