"""``scrape.prometheus_config``: a team's ``prometheus.yml`` read as it is, its scrape_configs as jobs.

``global.scrape_interval`` / ``scrape_timeout`` give the jobs' defaults, as in
Prometheus; ``rule_files`` are added to the config's own ``rule_files``; each
``scrape_configs`` entry becomes a :class:`ScrapeJob` (its
targets found by ``static_configs``, ``file_sd_configs``, ``http_sd_configs``
and ``dns_sd_configs``, paths relative to the file). A key inferwatch cannot
honour inside a scrape config (another discovery mechanism, ``oauth2``,
``proxy_url``...) is refused with its file, line and name: silently skipping it
would scrape other targets than Prometheus does. A top-level section it does not
read (``alerting``, ``remote_write``...) is listed by
:func:`prometheus_config_notes`, with its line, by ``serve`` at start and by
``config check``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from inferwatch._exceptions import ConfigError
from inferwatch.model import parse_duration
from inferwatch.settings.scrape._scrape_job import ScrapeJob

__all__ = ["prometheus_config_notes", "read_prometheus_jobs", "read_prometheus_rule_files"]

_RENAMED = {"job_name": "job", "scrape_interval": "interval", "scrape_timeout": "timeout"}
_SAME = {"metrics_path", "scheme", "params", "honor_labels", "honor_timestamps", "static_configs",
         "file_sd_configs", "http_sd_configs", "dns_sd_configs", "kubernetes_sd_configs", "relabel_configs",
         "metric_relabel_configs",
         "basic_auth", "authorization", "tls_config", "sample_limit", "label_limit",
         "label_name_length_limit", "label_value_length_limit", "body_size_limit"}
_HARMLESS = {"follow_redirects", "enable_http2"}  # what inferwatch does anyway (redirects followed)
_GLOBAL_READ = {"scrape_interval", "scrape_timeout"}
_TOP_READ = {"global", "scrape_configs", "rule_files"}


def _load(path: Path) -> tuple[dict[str, Any], yaml.MappingNode]:
    try:
        text = path.read_text("utf-8")
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the Prometheus config: {exc}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        data, node = {}, yaml.MappingNode("tag:yaml.org,2002:map", [])
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise ConfigError(f"{path}: a Prometheus config is a mapping (global, scrape_configs, ...)")
    return data, node


def _lines(node: yaml.Node | None) -> dict[str, int]:
    """Each key of a mapping node and its line (1-based)."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): k.start_mark.line + 1 for k, _ in node.value}


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if k.value == key:
                found: yaml.Node = v
                return found
    return None


def _job(raw: Any, at: tuple[Path, int, int], lines: dict[str, int], defaults: tuple[float, float]
         ) -> ScrapeJob:
    path, i, line = at
    where = f"{path}:{line}: scrape_configs[{i}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where}: a scrape config is a mapping")
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _RENAMED:
            out[_RENAMED[key]] = value
        elif key in _SAME:
            out[key] = value
        elif key not in _HARMLESS:
            raise ConfigError(f"{path}:{lines.get(key, line)}: scrape_configs[{i}]: {key} is not supported "
                              "by inferwatch (it would scrape other targets than Prometheus); supported: "
                              f"{', '.join(sorted({*_RENAMED, *_SAME}))}")
    interval = out.setdefault("interval", defaults[0])
    if "timeout" not in out:  # Prometheus: the global timeout, cut to the job's interval
        out["timeout"] = min(defaults[1], parse_duration(interval) if isinstance(interval, str) else interval)
    out["file_sd_configs"] = [{**c, "files": [str(path.parent / f) for f in c.get("files") or []]}
                              if isinstance(c, dict) else c for c in out.get("file_sd_configs") or []]
    out["kubernetes_sd_configs"] = [  # a kubeconfig_file is relative to the prometheus.yml, as in Prometheus
        {**c, "kubeconfig_file": str(path.parent / c["kubeconfig_file"])}
        if isinstance(c, dict) and isinstance(c.get("kubeconfig_file"), str) else c
        for c in out.get("kubernetes_sd_configs") or []]
    try:
        return ScrapeJob.model_validate(out)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{where}: {field}: {err['msg']}") from None


def read_prometheus_jobs(path: str | Path) -> tuple[ScrapeJob, ...]:
    """The scrape jobs of a ``prometheus.yml``; raises ``ConfigError`` naming file, line and key."""
    path = Path(path)
    data, node = _load(path)
    glob = data.get("global") or {}
    if not isinstance(glob, dict):
        raise ConfigError(f"{path}: global must be a mapping")
    try:
        defaults = (parse_duration(str(glob.get("scrape_interval", "1m"))),
                    parse_duration(str(glob.get("scrape_timeout", "10s"))))
    except ValueError as exc:
        raise ConfigError(f"{path}: global: {exc}") from None
    configs = data.get("scrape_configs") or []
    if not isinstance(configs, list):
        raise ConfigError(f"{path}: scrape_configs must be a list")
    seq = _child(node, "scrape_configs")
    items = seq.value if isinstance(seq, yaml.SequenceNode) else []
    jobs = []
    for i, raw in enumerate(configs):
        item = items[i] if i < len(items) else None
        line = item.start_mark.line + 1 if item is not None else 0
        jobs.append(_job(raw, (path, i, line), _lines(item), defaults))
    return tuple(jobs)


def read_prometheus_rule_files(path: str | Path) -> tuple[str, ...]:
    """The ``rule_files`` of a ``prometheus.yml``, relative to it (read by ``rule_files``'s loader)."""
    path = Path(path)
    data, _ = _load(path)
    files = data.get("rule_files") or []
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise ConfigError(f"{path}: rule_files must be a list of file names or globs")
    return tuple(str(path.parent / f) for f in files)


def prometheus_config_notes(path: str | Path) -> list[str]:
    """What of ``path`` inferwatch does not read: one line each, with its line number."""
    path = Path(path)
    try:
        _, node = _load(path)
    except ConfigError:
        return []  # read_prometheus_jobs has refused it already
    top = _lines(node)
    notes = [(line, key) for key, line in top.items() if key not in _TOP_READ]
    notes += [(line, f"global.{key}") for key, line in _lines(_child(node, "global")).items()
              if key not in _GLOBAL_READ]
    return [f"{path}:{line}: {key} is not read by inferwatch (ignored)" for line, key in sorted(notes)]
