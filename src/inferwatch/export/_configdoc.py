"""The effective config as a plain document that ``load_config`` reads back unchanged."""

from __future__ import annotations

import enum
from typing import Any

from inferwatch.config import Config, Secret

__all__ = ["config_document"]


def _plain(value: Any) -> Any:
    if isinstance(value, Secret):
        return value.reveal()  # the server that reads the document needs them
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def config_document(config: Config) -> dict[str, Any]:
    """Every section with its defaults filled in, secrets revealed, YAML-safe types."""
    doc: dict[str, Any] = _plain(config.model_dump(mode="python", by_alias=True))
    alerting = doc["alerting"]
    # The effective receivers and actions, so that the document stands alone.
    alerting["receivers"] = _plain([r.model_dump(mode="python", by_alias=True)
                                    for r in config.alerting.effective_receivers()])
    return doc
