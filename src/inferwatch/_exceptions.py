"""The one exception hierarchy of inferwatch.

    InferwatchError
    ├── ConfigError            a config file, field or value is wrong (names file, field, value)
    │   └── MissingCredentialError   a receiver has no key/token: it falls back to the terminal
    ├── InputError             a data file, HTTP body or CLI argument is wrong (names where)
    │   └── LimitExceeded          a batch broke an ingest limit (``reason`` names it)
    ├── StoreError             the time-series or state store failed
    ├── NotifyError            a receiver failed; ``retryable`` says whether to try again,
    │                          ``retry_after`` how long the service asked to wait (429/503)
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
    "LimitExceeded",
    "MissingCredentialError",
    "NotifyError",
    "StoreError",
    "ToolMissingError",
]


class InferwatchError(Exception):
    """Base class of every error inferwatch raises on purpose."""


class ConfigError(InferwatchError):
    """A configuration file, field or value is invalid."""


class MissingCredentialError(ConfigError):
    """A receiver's config lacks the credential it needs (``missing`` names the fields)."""

    def __init__(self, receiver: str, missing: str) -> None:
        super().__init__(f"{receiver}: no credentials: needs {missing}")
        self.receiver = receiver
        self.missing = missing


class InputError(InferwatchError):
    """Input data (file, HTTP body, CLI argument) is invalid."""


class LimitExceeded(InputError):
    """A batch broke an ingest limit; ``reason`` is the limit's name (``label_limit``, ``max_series``...)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


class StoreError(InferwatchError):
    """The time-series or state store failed."""


class NotifyError(InferwatchError):
    """A receiver failed to deliver a notification.

    ``retryable`` tells the notify stage whether another attempt may succeed;
    ``retry_after`` is the wait in seconds the service asked for (a ``Retry-After``
    header on 429 or 503), ``None`` when it did not say.
    """

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class ActionError(InferwatchError):
    """An automated action (scale out, degrade, rollback) failed."""


class ToolMissingError(InferwatchError):
    """An optional extra or external binary is needed but not installed."""
