"""Loading the YAML config, with errors that name the file, the field and the value.

The loader reads into any root model built on ``BaseConfig``: ``inferwatch.settings`` gives it the
root whose receivers are typed by the union of every receiver type (assembled above
``alerting``, whose registry makes that union).
"""

from __future__ import annotations

import os
import typing
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import TypeAdapter, ValidationError

from inferwatch._env import ENV_CONFIG
from inferwatch._exceptions import ConfigError
from inferwatch.settings._redact import mask_secret_fields, secret_field_names
from inferwatch.settings._root import BaseConfig
from inferwatch.settings._yaml import safe_load_strict
from inferwatch.settings.alerting import BaseAlertingConfig, read_alertmanager_file
from inferwatch.settings.scrape import (
    ProbeSpec,
    ScrapeConfig,
    ScrapeJob,
    read_prometheus_jobs,
    read_prometheus_rule_files,
)

__all__ = ["describe_validation", "load_as", "parse_as", "with_web_config"]

C = TypeVar("C", bound=BaseConfig)


def load_as(model: type[C], path: str | os.PathLike[str] | None = None) -> C:
    """Load and validate a config file as ``model``; ``None`` uses ``$INFERWATCH_CONFIG`` or the defaults."""
    if path is None:
        env = os.environ.get(ENV_CONFIG)
        if not env:
            return model()
        path = env
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{p}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read config file: {exc}") from exc
    return _relative_to(parse_as(model, text, source=str(p)), p.parent)


def _relative_to(config: C, base: Path) -> C:
    """``slo_files`` paths, probes' golden files, CA files and ``file_sd_configs`` files resolved
    against the config file's directory (as Prometheus's rule_files and file_sd_configs)."""
    if config.scrape.jobs or config.scrape.prometheus_config:
        config = config.model_copy(update={"scrape": _scrape_relative(config.scrape, base)})
    rule_files = tuple(str(base / f) for f in config.rule_files)
    if config.scrape.prometheus_config:  # already resolved above: its rule_files are relative to it
        rule_files += read_prometheus_rule_files(config.scrape.prometheus_config)
    if rule_files:
        config = config.model_copy(update={"rule_files": rule_files})
    if config.alerting.alertmanager_file:
        config = config.model_copy(update={"alerting": _with_alertmanager_file(config.alerting, base)})
    auth = config.server.auth
    if auth.web_config_file is not None:
        config = with_web_config(config, str(base / auth.web_config_file))
    if config.probes:
        config = config.model_copy(update={"probes": tuple(_probe_relative(p, base) for p in config.probes)})
    if not config.slo_files:
        return config
    refs = tuple(r.model_copy(update={"path": str(base / r.path)}) for r in config.slo_files)
    return config.model_copy(update={"slo_files": refs})


def _scrape_relative(scrape: ScrapeConfig, base: Path) -> ScrapeConfig:
    """Own jobs' files resolved; the jobs of ``prometheus_config`` (read now, relative to it) added."""
    jobs = tuple(_job_relative(j, base) for j in scrape.jobs)
    if scrape.prometheus_config is None:
        return scrape.model_copy(update={"jobs": jobs})
    path = str(base / scrape.prometheus_config)
    try:
        return ScrapeConfig(targets=scrape.targets, jobs=(*jobs, *read_prometheus_jobs(path)),
                            prometheus_config=path)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {exc.errors()[0]['msg']}") from None


def _with_alertmanager_file(alerting: BaseAlertingConfig, base: Path) -> BaseAlertingConfig:
    """``alerting`` with the route, receivers, inhibit rules and time intervals of its alertmanager.yml."""
    path = str(base / str(alerting.alertmanager_file))
    receiver = typing.get_args(type(alerting).model_fields["receivers"].annotation)[0]
    read = read_alertmanager_file(path, TypeAdapter(receiver).validate_python)
    both = sorted(alerting.model_fields_set & set(read) - {"resolve_timeout"})
    if both:
        raise ConfigError(f"alerting: {', '.join(both)} given both here and by alertmanager_file {path}: "
                          "keep them in one place")
    own = {k: getattr(alerting, k) for k in alerting.model_fields_set}
    try:
        return type(alerting).model_validate({**own, **read, "alertmanager_file": path})
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, path)) from None


def _job_relative(job: ScrapeJob, base: Path) -> ScrapeJob:
    if not job.file_sd_configs:
        return job
    sd = tuple(c.model_copy(update={"files": tuple(str(base / f) for f in c.files)})
               for c in job.file_sd_configs)
    return job.model_copy(update={"file_sd_configs": sd})


def _probe_relative(probe: ProbeSpec, base: Path) -> ProbeSpec:
    update: dict[str, Any] = {}
    if probe.golden is not None:
        update["golden"] = probe.golden.model_copy(update={"file": str(base / probe.golden.file)})
    if probe.tls.ca_file is not None:
        update["tls"] = probe.tls.model_copy(update={"ca_file": str(base / probe.tls.ca_file)})
    return probe.model_copy(update=update) if update else probe


def with_web_config(config: C, path: str | None) -> C:
    """``config`` with ``server.auth.web_config_file`` set to ``path`` (``--web.config.file``; ``None``:
    as it is)."""
    if path is None:
        return config
    auth = config.server.auth.model_copy(update={"web_config_file": path})
    return config.model_copy(update={"server": config.server.model_copy(update={"auth": auth})})


def parse_as(model: type[C], text: str, *, source: str = "<config>") -> C:
    """Validate YAML text as ``model``; ``source`` names it in errors."""
    try:
        data = safe_load_strict(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{source}{where}: invalid YAML: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the top level must be a mapping, got {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation(exc, source)) from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to validate") from None


def describe_validation(exc: ValidationError, source: str) -> str:
    """pydantic's errors as lines ``source: field: problem (got value)``; secrets never echoed."""
    lines = []
    for err in exc.errors():
        field = _field_path(err["loc"])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            lines.append(f"{source}: {field}: unknown field")
            continue
        secret = bool(set(map(str, err["loc"])) & secret_field_names())  # never echo a key
        shown = _short(mask_secret_fields(err.get("input")))
        got = "" if err["type"] == "missing" or secret else f" (got {shown})"
        lines.append(f"{source}: {field}: {msg}{got}")
    return "\n".join(lines)


def _field_path(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "tagged-union[")):
            continue
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
