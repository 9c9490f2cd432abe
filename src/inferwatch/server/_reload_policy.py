"""What a reload does with each config section: rebuilt, or named in the reply as kept until a restart.

Every field of the config's root and of ``server`` is in ``SECTIONS`` (a test walks the config
models and fails on one that is missing), so a new section cannot be silently kept by a reload.

- ``rebuilt``: the next generation is built from it (``build_components``), or it is read afresh
  each round (``server.evaluation_interval``);
- ``applied``: the reloader applies it through its own hook (``alerting``: ``Pipeline.reconfigure``;
  ``server.api_token``: the live token), and says so, or names it when there is no hook;
- ``restart``: kept as it was at start; a reload whose config changes it says so in its reply;
- ``refused``: a reload that changes it is refused (``storage``, ``server.data_dir``);
- ``unused``: ``serve`` does not read it (the SDK, the exporter and the drift CLI do, when they start);
  a change is named as such.
"""

from __future__ import annotations

from typing import Any

from inferwatch.config import Config

__all__ = ["SECTIONS", "reload_notes", "section_value"]

SECTIONS: dict[str, str] = {
    "server.listen": "restart",
    "server.data_dir": "refused",
    "server.evaluation_interval": "rebuilt",
    "server.api_token": "applied",
    "server.auth": "applied",
    "server.external_url": "restart",
    "server.query": "restart",
    "server.http": "restart",
    "server.limits": "restart",
    "server.remote_write": "restart",
    "server.outcomes": "restart",
    "server.shutdown_grace": "restart",
    "storage": "refused",
    "scrape": "rebuilt",
    "rules": "rebuilt",
    "rule_files": "rebuilt",  # Prometheus rule files, read again with the rules
    "alerting": "applied",
    "alerting.alertmanagers": "restart",
    "alerting.heartbeat": "restart",
    "sdk": "unused",
    "quality": "unused",
    "collect": "unused",
    "baseline": "rebuilt",
    "edge": "restart",
    "slos": "rebuilt",
    "slo_files": "rebuilt",
    "probes": "rebuilt",
    "heartbeats": "restart",
    "ha": "restart",
}

_SAID = {
    "server.limits": "server.limits changes reach the store's series limits and scrape now; remote-write in, "
                     "OTLP metrics and edge ingest keep theirs until a restart",
}


def section_value(config: Config, path: str) -> Any:
    """The value at a dotted path (``server.listen``)."""
    value: Any = config
    for part in path.split("."):
        value = getattr(value, part)
    return value


def reload_notes(new: Config, old: Config) -> list[str]:
    """One line per changed section that the reload keeps as it was (restart) or that serve never reads."""
    notes = []
    for path, kind in SECTIONS.items():
        if kind not in ("restart", "unused") or section_value(new, path) == section_value(old, path):
            continue
        if kind == "unused":
            notes.append(f"{path} is not read by serve (the SDK, exporter or CLI read it when they start)")
        else:
            notes.append(_SAID.get(path, f"{path} changes take effect after a restart"))
    return notes
