"""Receivers of no one platform: e-mail, Alertmanager's webhook, the terminal, the digest, discard."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.settings._types import Duration, FrozenModel, Secret
from inferwatch.settings.receivers._base import (
    ReceiverBase,
)

__all__ = ["DigestReceiverSpec", "DiscardReceiverSpec", "EmailReceiverSpec", "TerminalReceiverSpec",
           "WebhookReceiverSpec"]


class EmailReceiverSpec(ReceiverBase):
    """E-mail over SMTP: STARTTLS by default, implicit TLS on port 465; no login in clear unless told."""

    type: Literal["email"] = "email"
    smarthost: str = Field("", description="host:port of the SMTP server")
    from_: str = Field("inferwatch@localhost", alias="from")
    to: tuple[str, ...] = ()
    username: str = ""
    password: Secret | None = None
    starttls: bool = Field(True, description="upgrade with STARTTLS; refuse a server that does not offer it")
    implicit_tls: bool | None = Field(None, description="TLS from the first byte (default: on for port 465)")
    allow_insecure_auth: bool = Field(False, description="allow a login over a connection without TLS")
    ca_file: str = Field("", description="PEM file of the CAs to trust (default: the system's)")
    timeout: Duration = 10.0

    model_config = FrozenModel.model_config | {"populate_by_name": True}

    @field_validator("smarthost")
    @classmethod
    def _hostport(cls, v: str) -> str:
        host, _, port = v.rpartition(":")
        if v and (not host or not port.isdigit() or not 0 < int(port) < 65536):
            raise ValueError("must be host:port, e.g. smtp.example.com:587")
        return v

    @property
    def uses_implicit_tls(self) -> bool:
        """TLS from connect: ``implicit_tls``, or port 465 (SMTPS) when not set."""
        return self.implicit_tls if self.implicit_tls is not None else self.smarthost.endswith(":465")

    @model_validator(mode="after")
    def _no_login_in_clear(self) -> EmailReceiverSpec:
        clear = not self.starttls and not self.uses_implicit_tls
        if clear and self.username and not self.allow_insecure_auth:
            raise ValueError("username/password would be sent in clear (starttls: false, no implicit TLS); "
                             "turn TLS on, or set allow_insecure_auth: true")
        return self


class WebhookReceiverSpec(ReceiverBase):
    """POST of Alertmanager's webhook JSON (version 4)."""

    type: Literal["webhook"] = "webhook"
    url: str = ""
    bearer_token: Secret | None = None
    max_alerts: int = Field(0, ge=0, description="0: no limit; else truncate and count")


class TerminalReceiverSpec(ReceiverBase):
    """Print notifications on standard output."""

    type: Literal["terminal"] = "terminal"


class DiscardReceiverSpec(ReceiverBase):
    """Sends nothing: Alertmanager's receiver without integrations (a route's alerts end there)."""

    type: Literal["discard"] = "discard"


class DigestReceiverSpec(ReceiverBase):
    """Collect alerts into a digest delivered daily at a local time."""

    type: Literal["digest"] = "digest"
    at: str = Field("09:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="local HH:MM")
    timezone: str | None = Field(None, description="IANA time zone, e.g. Asia/Shanghai; "
                                 "empty: alerting.timezone")
    deliver_to: str = Field("terminal", description="the receiver that gets the digest")

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str | None) -> str | None:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        if v is None:
            return v
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r}") from None
        return v
