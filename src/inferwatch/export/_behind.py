"""The config of an inferwatch server that sits behind a real Alertmanager.

Prometheus scrapes and evaluates, Alertmanager routes, groups and delivers
what it can; this server only receives Alertmanager's webhook and runs the
rest. So: no scrape targets and no rules (they would fire twice), the receivers
that Alertmanager delivers itself become terminal receivers of the same name
(logged, not sent twice), and every ``group_wait`` is zero because
Alertmanager has already waited.
"""

from __future__ import annotations

from typing import Any

from inferwatch.config import Config
from inferwatch.export._configdoc import config_document
from inferwatch.export._native import is_native

__all__ = ["behind_alertmanager_config"]


def _no_wait(route: dict[str, Any]) -> dict[str, Any]:
    out = {**route, "group_wait": 0.0}
    if route.get("routes"):
        out["routes"] = [_no_wait(child) for child in route["routes"]]
    return out


def behind_alertmanager_config(config: Config) -> dict[str, Any]:
    """The effective config, reduced to the receiver role (see the module's docstring)."""
    doc = config_document(config)
    doc["scrape"] = {"targets": []}
    doc["rules"] = {"default_pack": False, "rules": []}
    alerting = doc["alerting"]
    alerting["route"] = _no_wait(alerting["route"])
    alerting["receivers"] = [
        {"name": spec.name, "type": "terminal"} if is_native(spec) else dumped
        for spec, dumped in zip(config.alerting.effective_receivers(), alerting["receivers"], strict=True)
    ]
    return doc
