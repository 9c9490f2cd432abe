"""Agent configurations from the server: ``GET /api/v1/edge/config`` (agent: ``edge/_remote_config``).

``edge.agent_configs`` names a directory of YAML files, each one configuration::

    match: {site: berlin}          # the labels the device's agent reports (and device: its name); {} all
    config:                        # what the agent applies without a restart
      deadband: {band: 0.05}
      upload: {interval: 10s}

The files are read in name order and the first whose ``match`` the device fits is its
configuration; its hash (SHA-256 of the canonical JSON, 16 hex digits) is the ETag.
Files are read again when they change (a new configuration reaches the agents at their
next poll, no reload); one that does not read is left out and logged. The server does
not validate ``config`` beyond its being a mapping: the agent does, refuses what it
cannot apply and reports why, so the fleet page shows it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["AgentConfigs", "config_hash"]

log = logging.getLogger(__name__)


def config_hash(config: Mapping[str, Any]) -> str:
    """The hash an agent reports back: SHA-256 of the canonical JSON, 16 hex digits."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class AgentConfigs:
    """The directory's configurations, re-read when a file changes; thread-safe."""

    def __init__(self, directory: str | os.PathLike[str] | None) -> None:
        self.directory = Path(directory) if directory else None
        self._cache: dict[Path, tuple[tuple[int, int], tuple[dict[str, str], dict[str, Any]] | None]] = {}
        self._lock = threading.Lock()

    def for_device(self, device: str, labels: Mapping[str, str]) -> tuple[str, dict[str, Any]]:
        """``(hash, config)`` of the first configuration ``device`` fits (``("", {})``: none)."""
        have = {**labels, "device": device}
        for match, config in self._entries():
            if all(have.get(k) == v for k, v in match.items()):
                return config_hash(config), config
        return "", {}

    def _entries(self) -> list[tuple[dict[str, str], dict[str, Any]]]:
        if self.directory is None:
            return []
        try:
            files = sorted(p for p in self.directory.iterdir() if p.suffix in (".yaml", ".yml"))
        except OSError as exc:
            log.warning("edge.agent_configs %s: cannot list (%s)", self.directory, exc)
            return []
        out = []
        with self._lock:
            for path in files:
                entry = self._read(path)
                if entry is not None:
                    out.append(entry)
        return out

    def _read(self, path: Path) -> tuple[dict[str, str], dict[str, Any]] | None:
        try:
            st = path.stat()
        except OSError:
            return None
        key = (st.st_mtime_ns, st.st_size)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == key:
            return cached[1]
        entry = _parse(path)
        self._cache[path] = (key, entry)
        return entry


def _parse(path: Path) -> tuple[dict[str, str], dict[str, Any]] | None:
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        log.warning("edge agent configuration %s: does not read (%s); left out", path, str(exc)[:200])
        return None
    match = doc.get("match") if isinstance(doc, dict) else None
    config = doc.get("config") if isinstance(doc, dict) else None
    if not isinstance(match or {}, dict) or not isinstance(config, dict):
        log.warning("edge agent configuration %s: expected match: {labels} and config: {...}; left out", path)
        return None
    return {str(k): str(v) for k, v in (match or {}).items()}, json.loads(json.dumps(config, default=str))
