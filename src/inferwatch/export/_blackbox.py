"""``blackbox.yml`` and the probe scrape jobs: the config's ``probes`` run by a blackbox_exporter.

One http module per probe (``inferwatch_<name>``: method, headers, body, accepted
statuses, body regexes, redirects, TLS) and one Prometheus job per probe, with the
usual relabelling (the target URL becomes ``__param_target`` and ``instance``; the
exporter's address becomes ``__address__``). What blackbox_exporter 0.23 cannot
check stays with ``serve``: a ``json_path`` condition becomes a body regex only for
a top-level key equal to a string or number (``"label": "cat"``); golden sets and
generative timings have no module (the export says so in the module's comment field).
"""

from __future__ import annotations

import json
import re
from typing import Any

from inferwatch.config import Config, ProbeSpec
from inferwatch.export._options import ExportOptions
from inferwatch.model import format_duration

__all__ = ["blackbox_config", "blackbox_jobs", "module_name"]

_TOP_KEY = re.compile(r"^\$\.([A-Za-z_][A-Za-z0-9_]*)$")


def module_name(probe: ProbeSpec) -> str:
    """The probe's module in ``blackbox.yml``."""
    return "inferwatch_" + re.sub(r"[^A-Za-z0-9_]", "_", probe.name)


def _json_regex(probe: ProbeSpec) -> str | None:
    """A body regex standing for ``json_path`` + ``equals`` where one can (a top-level key, a scalar)."""
    e = probe.expect
    m = _TOP_KEY.match(e.json_path or "")
    if m is None or e.equals is None or isinstance(e.equals, dict | list | bool):
        return None
    return f'"{re.escape(m.group(1))}"\\s*:\\s*{re.escape(json.dumps(e.equals))}'


def _body(probe: ProbeSpec) -> str | None:
    if probe.body is None:
        return None
    return probe.body if isinstance(probe.body, str) else json.dumps(probe.body)


def _module(probe: ProbeSpec) -> dict[str, Any]:
    e = probe.expect
    http: dict[str, Any] = {"method": probe.method, "preferred_ip_protocol": "ip4",
                            "valid_status_codes": list(e.status)}  # [] is blackbox's 2xx too
    if probe.headers:
        http["headers"] = {k: v.reveal() for k, v in probe.headers.items()}
    body = _body(probe)
    if body is not None:
        http["body"] = body
    must = [r for r in (e.body_regex, _json_regex(probe)) if r]
    if must:
        http["fail_if_body_not_matches_regexp"] = must
    if e.body_not_regex:
        http["fail_if_body_matches_regexp"] = [e.body_not_regex]
    if not probe.follow_redirects:
        http["no_follow_redirects"] = True
    tls: dict[str, Any] = {}
    if probe.tls.insecure_skip_verify:
        tls["insecure_skip_verify"] = True
    if probe.tls.ca_file:
        tls["ca_file"] = probe.tls.ca_file
    if tls:
        http["tls_config"] = tls
    return {"prober": "http", "timeout": format_duration(probe.timeout), "http": http}


def exportable(probe: ProbeSpec) -> bool:
    """Whether blackbox_exporter can run the probe (golden sets and generative timings cannot)."""
    return probe.golden is None and probe.generative is None


def blackbox_config(config: Config) -> dict[str, Any]:
    """``blackbox.yml`` as a dict: one module per probe blackbox_exporter can run."""
    return {"modules": {module_name(p): _module(p) for p in config.probes if exportable(p)}}


def blackbox_jobs(config: Config, opts: ExportOptions) -> list[dict[str, Any]]:
    """One scrape job per probe, relabelled the usual way onto the exporter at ``opts.blackbox``."""
    jobs = []
    for p in config.probes:
        if not exportable(p):
            continue
        jobs.append({
            "job_name": f"probe-{p.name}",
            "scrape_interval": format_duration(p.interval),
            "scrape_timeout": format_duration(p.timeout),
            "metrics_path": "/probe",
            "params": {"module": [module_name(p)]},
            "static_configs": [{"targets": [p.url], "labels": {**p.labels, "probe": p.name}}],
            "relabel_configs": [
                {"source_labels": ["__address__"], "target_label": "__param_target"},
                {"source_labels": ["__param_target"], "target_label": "instance"},
                {"target_label": "__address__", "replacement": opts.blackbox},
            ],
        })
    return jobs
