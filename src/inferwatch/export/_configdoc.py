"""The effective config as a plain document that ``load_config`` reads back unchanged."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel

from inferwatch.config import Config, Secret

__all__ = ["config_document"]


def _plain(value: Any) -> Any:
    # Walks the models themselves: model_dump would print each Secret as "<secret>".
    if isinstance(value, BaseModel):
        return {field.alias or name: _plain(getattr(value, name))
                for name, field in type(value).model_fields.items() if getattr(value, name) is not None}
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
    doc: dict[str, Any] = _plain(config)
    # The effective receivers, so that the document stands alone.
    doc["alerting"]["receivers"] = _plain(list(config.alerting.effective_receivers()))
    return doc
