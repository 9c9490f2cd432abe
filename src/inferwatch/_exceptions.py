"""The one exception hierarchy of inferwatch.

    InferwatchError
    ├── ConfigError            a config file, field or value is wrong (names file, field, value)
    ├── InputError             a data file, HTTP body or CLI argument is wrong (names where)
    ├── StoreError             the time-series or state store failed
    ├── NotifyError            a receiver failed; ``retryable`` says whether to try again
    ├── ActionError            an action (scale out, degrade, rollback) failed
    └── ToolMissingError       an optional extra or external binary is not installed

Third-party errors are translated at the boundary with ``raise ... from exc``;
the CLI turns any ``InferwatchError`` into one readable line and an exit code.
"""

from __future__ import annotations

__all__ = [
    "ActionError",
    "ConfigError",
    "InferwatchError",
    "InputError",
    "NotifyError",
    "StoreError",
    "ToolMissingError",
]


class InferwatchError(Exception):
    """Base class of every error inferwatch raises on purpose."""


class ConfigError(InferwatchError):
    """A configuration file, field or value is invalid."""


class InputError(InferwatchError):
    """Input data (file, HTTP body, CLI argument) is invalid."""


class StoreError(InferwatchError):
    """The time-series or state store failed."""


class NotifyError(InferwatchError):
    """A receiver failed to deliver a notification.

    ``retryable`` tells the notify stage whether another attempt may succeed.
    """

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class ActionError(InferwatchError):
    """An automated action (scale out, degrade, rollback) failed."""


class ToolMissingError(InferwatchError):
    """An optional extra or external binary is needed but not installed."""
