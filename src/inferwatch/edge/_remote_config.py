"""Configuration from the server: poll ``GET /api/v1/edge/config``, validate, apply without a restart.

The server holds agent configurations matched to devices by the labels they report
(``server/ingest/_edge_config``). The agent asks every ``upload.config_poll`` (60 s)
with ``If-None-Match: "<hash>"`` of the last configuration it saw; the server answers
304 when it is the same, else 200 ``{"hash": ..., "config": {...}}``. What a remote
configuration may set is what applies to a running agent: ``deadband`` (all of it),
``upload.batch_size`` and ``upload.interval``, and ``labels``. It is validated by the
agent's own parser (the same errors a file gets, naming ``server config <hash>``); a
configuration that does not validate is refused: the agent keeps the one it has and
reports the refusal (``config_error``) with the hash it keeps (``config_hash``) in every
batch, so the fleet page shows both. A network error or a server without the endpoint
(404) changes nothing.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inferwatch._exceptions import ConfigError
from inferwatch.edge._config import AgentConfig, parse_agent_config
from inferwatch.edge._http import HttpClient, Transport, TransportError

__all__ = ["CONFIG_PATH", "REMOTE_KEYS", "RemoteConfig", "RemoteSettings"]

log = logging.getLogger(__name__)

CONFIG_PATH = "/api/v1/edge/config"
REMOTE_KEYS: Mapping[str, tuple[str, ...]] = {"deadband": (), "upload": ("batch_size", "interval"),
                                              "labels": ()}  # () : the whole section


@dataclass(frozen=True)
class RemoteSettings:
    """What a remote configuration sets, validated (the agent applies it as a whole)."""

    hash: str
    config: AgentConfig


class RemoteConfig:
    """Polls the server for this device's configuration; :meth:`poll` returns one to apply, or ``None``."""

    def __init__(self, cfg: AgentConfig, *, transport: Transport | None = None) -> None:
        self.base, self.url = cfg, cfg.upload.url.rstrip("/") + CONFIG_PATH
        self.token = cfg.upload.token or ""
        self.transport = transport or HttpClient(cfg.upload.timeout)
        self.seen = ""  # the hash of the last configuration the server sent (applied or refused)
        self.applied = ""  # the hash of the one applied ("" : the local file's)
        self.error = ""  # why the last one sent was refused

    def poll(self) -> RemoteSettings | None:
        """Ask the server once; a new valid configuration comes back (apply it, then :meth:`done`)."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if self.seen:
            headers["If-None-Match"] = f'"{self.seen}"'
        try:
            status, body = self.transport.request("GET", self.url, None, headers)
        except TransportError:
            return None
        if status != 200:
            return None  # 304 the same, 404 an older server, 401 a token problem the uploads report
        try:
            doc = json.loads(body)
            got, raw = str(doc["hash"]), doc["config"]
        except (ValueError, KeyError, TypeError):
            return None
        self.seen = got
        if got == self.applied:
            return None
        try:
            settings = RemoteSettings(got, self.validate(got, raw))
        except ConfigError as exc:
            self.error = str(exc)[:200]
            log.warning("configuration %s from the server refused, keeping %s: %s", got[:12],
                        self.applied[:12] or "the local file's", exc)
            return None
        return settings

    def close(self) -> None:
        """Close the connection."""
        close = getattr(self.transport, "close", None)
        if close is not None:
            close()

    def done(self, settings: RemoteSettings) -> None:
        """``settings`` were applied."""
        self.applied, self.error = settings.hash, ""
        log.info("configuration %s from the server applied", settings.hash[:12])

    def validate(self, got: str, raw: Any) -> AgentConfig:
        """The local configuration with ``raw``'s sections in place, validated as a file would be."""
        where = f"server config {got[:12]}"
        if not isinstance(raw, dict):
            raise ConfigError(f"{where}: expected a mapping, got {raw!r:.60}")
        for key, value in raw.items():
            if key not in REMOTE_KEYS:
                raise ConfigError(f"{where}: {key}: not settable from the server "
                                  f"(only {', '.join(REMOTE_KEYS)})")
            allowed = REMOTE_KEYS[key]
            if allowed and isinstance(value, dict) and set(value) - set(allowed):
                bad = sorted(set(value) - set(allowed))[0]
                raise ConfigError(f"{where}: {key}.{bad}: not settable from the server "
                                  f"(only {', '.join(allowed)})")
        up = self.base.upload
        local: dict[str, Any] = {"device": self.base.device, "labels": dict(self.base.labels),
                 "deadband": _deadband_raw(self.base), "sources": [{"type": "host"}],
                 "upload": {"url": up.url, "token": "-", "batch_size": up.batch_size,
                            "interval": up.interval, **(raw.get("upload") or {})}}
        remote_db = raw.get("deadband")
        merged = {**local, **{k: v for k, v in raw.items() if k not in ("upload", "deadband")},
                  "deadband": {**local["deadband"], **remote_db} if isinstance(remote_db, dict) else
                  local["deadband"] if remote_db is None else remote_db}
        got_cfg = parse_agent_config(merged, source=where)
        return dataclasses.replace(self.base, deadband=got_cfg.deadband, labels=got_cfg.labels,
                                   upload=dataclasses.replace(up, batch_size=got_cfg.upload.batch_size,
                                                              interval=got_cfg.upload.interval))


def _deadband_raw(cfg: AgentConfig) -> dict[str, Any]:
    d = cfg.deadband
    return {"band": d.band, "floor": d.floor, "heartbeat": d.heartbeat, "heartbeat_max": d.heartbeat_max,
            "floors": dict(d.floors)}

