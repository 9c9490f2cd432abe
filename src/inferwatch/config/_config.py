"""The config's root and its ``alerting`` section, assembled above ``alerting``, and the loader for them.

Every section is ``inferwatch.settings``'; what only exists above ``alerting`` is the union of
receiver types, made by ``alerting.notify``'s registry from its one line per channel. So a new
channel is its module, its fake, its docs and its registry line: the config names no receiver.
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import Field, TypeAdapter

from inferwatch.alerting.notify import ReceiverSpec
from inferwatch.settings import BaseAlertingConfig, BaseConfig, load_as, parse_as
from inferwatch.settings import read_alertmanager_file as read_as_alerting

__all__ = [
    "AlertingConfig", "Config", "ReceiverSpec", "load_config", "parse_config", "read_alertmanager_file",
]


class AlertingConfig(BaseAlertingConfig):
    """Notification pipeline settings (Alertmanager's shape, inferwatch's defaults).

    >>> AlertingConfig.model_validate({"receivers": [{"name": "ops", "type": "slack"}]}).receivers[0].type
    'slack'
    """

    receivers: tuple[ReceiverSpec, ...] = Field((), description="added to (or replacing) the defaults")


class Config(BaseConfig):
    """The root of ``inferwatch.yaml``; an empty file gives every default."""

    alerting: AlertingConfig = Field(default_factory=AlertingConfig)


_RECEIVER: TypeAdapter[Any] = TypeAdapter(ReceiverSpec)


def parse_config(text: str, *, source: str = "<config>") -> Config:
    """Validate YAML text; ``source`` names it in errors."""
    return parse_as(Config, text, source=source)


def load_config(path: str | os.PathLike[str] | None = None) -> Config:
    """Load and validate a config file; ``None`` uses ``$INFERWATCH_CONFIG`` or the defaults."""
    return load_as(Config, path)


def read_alertmanager_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The ``alerting`` fields an alertmanager.yml gives; raises ``ConfigError`` naming file, line, key."""
    return read_as_alerting(str(path), _RECEIVER.validate_python)
