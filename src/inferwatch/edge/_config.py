"""The agent's YAML config, as frozen dataclasses (no pydantic: the agent must start light).

::

    device: cam-1                        # the device label of every series
    spool: {path: /var/lib/inferwatch-edge/spool.sqlite, max_age: 24h, max_bytes: 268435456}
    deadband: {band: 0.1, floor: 0.01, heartbeat: 5m,
               heartbeat_max: 30m,           # series that never move back off to it (ingest
                                             # format 3 only: serve holds them; 5m elsewhere)
               floors: {bytes: 1024, seconds: 0.001, ratio: 0.01, celsius: 0.5, count: 1}}
    upload:
      type: ingest                       # or remote_write
      url: http://monitor:9464           # remote_write: the full write URL
      token_file: /etc/inferwatch-edge/token    # or $INFERWATCH_EDGE_TOKEN
      batch_size: 1000
      interval: 5s
      format: 3                          # ingest format; 2 for a server older than format 3
    sources:
      - {type: host, interval: 15s}
      - {type: gpu, interval: 15s}
      - {type: scrape, url: http://127.0.0.1:8000/metrics, interval: 15s}
      - {type: push, listen: 127.0.0.1:9465, interval: 15s}

Errors name the file, the field and the value (:class:`ConfigError`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inferwatch._exceptions import ConfigError
from inferwatch.edge._deadband import DEFAULT_FLOORS, DEFAULT_HEARTBEAT_MAX_S, DeadbandSettings
from inferwatch.model import is_valid_label_name, parse_duration

__all__ = [
    "ENV_EDGE_TOKEN", "AgentConfig", "SourceConfig", "SpoolConfig", "UploadConfig", "load_agent_config",
    "parse_agent_config",
]

ENV_EDGE_TOKEN = "INFERWATCH_EDGE_TOKEN"
"""The device's upload token (overrides ``upload.token_file``); never logged."""

SourceType = Literal["host", "gpu", "scrape", "push"]
_SOURCE_TYPES = ("host", "gpu", "scrape", "push")


@dataclass(frozen=True)
class SourceConfig:
    """One source of samples and how often it is read."""

    type: SourceType
    interval: float = 15.0
    url: str = ""  # scrape
    listen: str = "127.0.0.1:9465"  # push


@dataclass(frozen=True)
class SpoolConfig:
    """Where the durable buffer lives and its bounds."""

    path: Path = Path("edge-spool.sqlite")
    max_age: float = 86400.0
    max_bytes: int = 256 << 20


@dataclass(frozen=True)
class UploadConfig:
    """Where batches go and how."""

    type: Literal["ingest", "remote_write"] = "ingest"
    url: str = "http://127.0.0.1:9464"
    token: str | None = field(default=None, repr=False)
    batch_size: int = 1000
    interval: float = 5.0
    backoff_base: float = 1.0
    backoff_cap: float = 300.0
    timeout: float = 10.0
    format: int = 3  # ingest: 3 (columns; the server fills in between sent points) or 2 (older servers)
    config_poll: float = 60.0  # ingest: ask the server for this device's configuration this often (0: never)


@dataclass(frozen=True)
class AgentConfig:
    """The whole agent config."""

    device: str
    spool: SpoolConfig = field(default_factory=SpoolConfig)
    deadband: DeadbandSettings = field(default_factory=DeadbandSettings)
    upload: UploadConfig = field(default_factory=UploadConfig)
    sources: tuple[SourceConfig, ...] = (SourceConfig("host"),)
    labels: Mapping[str, str] = field(default_factory=dict)  # the device's own (site, ...): the fleet page


MAX_AGENT_LABELS = 16


class _Reader:
    """Reads one mapping of the YAML, naming ``file: field`` in every error."""

    def __init__(self, src: str, where: str, raw: Any) -> None:
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{src}: {where or 'top level'}: expected a mapping, got {raw!r:.60}")
        self.src, self.where, self.raw = src, where, dict(raw)

    def _name(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def fail(self, key: str, msg: str) -> ConfigError:
        return ConfigError(f"{self.src}: {self._name(key)}: {msg}, got {self.raw.get(key)!r:.80}")

    def sub(self, key: str) -> _Reader:
        return _Reader(self.src, self._name(key), self.raw.get(key))

    def check_keys(self, allowed: tuple[str, ...]) -> None:
        for key in self.raw:
            if key not in allowed:
                raise ConfigError(f"{self.src}: {self._name(str(key))}: unknown field "
                                  f"(expected one of {', '.join(allowed)})")

    def text(self, key: str, default: str) -> str:
        v = self.raw.get(key, default)
        if not isinstance(v, str) or not v:
            raise self.fail(key, "expected a non-empty string")
        return v

    def number(self, key: str, default: float, *, low: float = 0.0) -> float:
        v = self.raw.get(key, default)
        if isinstance(v, bool) or not isinstance(v, int | float) or not v > low:
            raise self.fail(key, f"expected a number above {low:g}")
        return float(v)

    def duration(self, key: str, default: float) -> float:
        v = self.raw.get(key, default)
        try:
            number = isinstance(v, int | float) and not isinstance(v, bool)
            secs = float(v) if number else parse_duration(str(v))
        except ValueError:
            raise self.fail(key, "expected a duration such as 15s or 5m") from None
        if not secs > 0:
            raise self.fail(key, "expected a positive duration")
        return secs


def _source(r: _Reader) -> SourceConfig:
    kind = r.raw.get("type")
    if kind not in _SOURCE_TYPES:
        raise r.fail("type", f"expected one of {', '.join(_SOURCE_TYPES)}")
    r.check_keys(("type", "interval", "url", "listen"))
    interval = r.duration("interval", 15.0)
    if kind == "scrape":
        url = r.text("url", "")
        if not url.startswith(("http://", "https://")):
            raise r.fail("url", "expected an http:// or https:// URL")
        return SourceConfig("scrape", interval, url=url)
    if kind == "push":
        return SourceConfig("push", interval, listen=r.text("listen", "127.0.0.1:9465"))
    return SourceConfig(kind, interval)


def _token(r: _Reader, base: Path) -> str | None:
    env = os.environ.get(ENV_EDGE_TOKEN)
    if env:
        return env.strip()
    if "token" in r.raw:
        return r.text("token", "")
    if "token_file" in r.raw:
        path = base / r.text("token_file", "")
        try:
            return path.read_text().strip() or None
        except OSError as exc:
            raise r.fail("token_file", f"cannot read {path} ({exc.strerror})") from None
    return None


def _upload(r: _Reader, base: Path) -> UploadConfig:
    r.check_keys(("type", "url", "token", "token_file", "batch_size", "interval", "backoff_base",
                  "backoff_cap", "timeout", "format", "config_poll"))
    kind = r.raw.get("type", "ingest")
    if kind not in ("ingest", "remote_write"):
        raise r.fail("type", "expected ingest or remote_write")
    url = r.text("url", UploadConfig.url)
    if not url.startswith(("http://", "https://")):
        raise r.fail("url", "expected an http:// or https:// URL")
    size = r.raw.get("batch_size", 1000)
    if isinstance(size, bool) or not isinstance(size, int) or not 1 <= size <= 100_000:
        raise r.fail("batch_size", "expected an integer from 1 to 100000")
    fmt = r.raw.get("format", 3)
    if fmt not in (2, 3) or isinstance(fmt, bool):
        raise r.fail("format", "expected 2 or 3 (the ingest format; 2 for servers before format 3)")
    poll = 0.0 if r.raw.get("config_poll") in (0, "0") else r.duration("config_poll", 60.0)
    return UploadConfig(kind, url, _token(r, base), size, r.duration("interval", 5.0),
                        r.duration("backoff_base", 1.0), r.duration("backoff_cap", 300.0),
                        r.duration("timeout", 10.0), fmt, poll)


def _floors(r: _Reader) -> dict[str, float]:
    out = dict(DEFAULT_FLOORS)
    for unit in r.raw:
        if not isinstance(unit, str) or not unit.isidentifier():
            raise r.fail(str(unit), "expected a unit word (bytes, seconds, ratio, count, ...)")
        out[unit] = r.number(unit, 0.0)
    return out


def parse_agent_config(raw: Any, *, source: str = "<config>", base: Path = Path(".")) -> AgentConfig:
    """Validate a parsed YAML document into an :class:`AgentConfig`."""
    top = _Reader(source, "", raw)
    top.check_keys(("device", "spool", "deadband", "upload", "sources", "labels"))
    device = top.text("device", "")
    sp, db = top.sub("spool"), top.sub("deadband")
    sp.check_keys(("path", "max_age", "max_bytes"))
    db.check_keys(("band", "floor", "heartbeat", "heartbeat_max", "floors"))
    max_bytes = sp.raw.get("max_bytes", SpoolConfig.max_bytes)
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 4096:
        raise sp.fail("max_bytes", "expected an integer of bytes, at least 4096")
    spool = SpoolConfig(base / sp.text("path", "edge-spool.sqlite"), sp.duration("max_age", 86400.0),
                        max_bytes)
    band = db.raw.get("band", 0.1)
    if isinstance(band, bool) or not isinstance(band, int | float) or not 0 <= band < 10:
        raise db.fail("band", "expected a number from 0 to 10 (0.1 = 10 %)")
    heartbeat = db.duration("heartbeat", 300.0)
    heartbeat_max = db.duration("heartbeat_max", max(DEFAULT_HEARTBEAT_MAX_S, heartbeat))
    if heartbeat_max < heartbeat:
        raise db.fail("heartbeat_max", f"expected at least the heartbeat ({heartbeat:g} s)")
    deadband = DeadbandSettings(float(band), db.number("floor", 0.01), heartbeat, heartbeat_max,
                                _floors(db.sub("floors")))
    raw_sources = top.raw.get("sources", [{"type": "host"}])
    if not isinstance(raw_sources, list) or not raw_sources:
        raise top.fail("sources", "expected a non-empty list")
    sources = tuple(_source(_Reader(source, f"sources[{i}]", s)) for i, s in enumerate(raw_sources))
    return AgentConfig(device, spool, deadband, _upload(top.sub("upload"), base), sources,
                       _labels(top.sub("labels")))


def _labels(r: _Reader) -> dict[str, str]:
    """``labels: {site: berlin}``: label names as Prometheus's, values strings, at most 16."""
    if len(r.raw) > MAX_AGENT_LABELS:
        raise ConfigError(f"{r.src}: labels: expected at most {MAX_AGENT_LABELS} labels, got {len(r.raw)}")
    out = {}
    for key, value in r.raw.items():
        if not isinstance(key, str) or not is_valid_label_name(key) or key.startswith("__") \
                or key == "device":
            raise r.fail(str(key), "expected a label name (not device, not __...)")
        if not isinstance(value, str | int | float) or isinstance(value, bool) or len(str(value)) > 128:
            raise r.fail(key, "expected a string of at most 128 characters")
        out[key] = str(value)
    return out


def load_agent_config(path: Path) -> AgentConfig:
    """Read and validate the agent's YAML file (paths in it are relative to the file)."""
    import yaml

    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({exc})") from None
    return parse_agent_config(raw, source=str(path), base=path.parent)
