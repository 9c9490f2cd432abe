"""The dead man's switch: ``alerting.heartbeat`` (a Watchdog sent out) and ``heartbeats`` (watched in).

``alerting.heartbeat`` sends an always-firing ``Watchdog`` to an outside service on
every ``interval`` (healthchecks.io, PagerDuty, Opsgenie, or any Alertmanager-style
webhook such as another inferwatch's ``/api/v1/heartbeats/NAME``), so that service
pages when this one goes quiet. ``heartbeats`` makes this server that outside service:
it pages through its own receivers when a heartbeat stays away ``missing_after``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.settings._types import Duration, FrozenModel, Secret

__all__ = ["HeartbeatKind", "HeartbeatSenderSpec", "HeartbeatWatchSpec", "check_heartbeats"]

HeartbeatKind = Literal["webhook", "healthchecks", "pagerduty", "opsgenie"]
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")


class HeartbeatSenderSpec(FrozenModel):
    """``alerting.heartbeat``: the Watchdog this server sends to an outside dead man's switch.

    ``url`` and ``key`` are secrets: give them here, in a file (``url_file``, ``key_file``)
    or in ``$INFERWATCH_HEARTBEAT_URL`` / ``$INFERWATCH_HEARTBEAT_KEY`` (which win).
    """

    kind: HeartbeatKind = Field(
        "webhook", description="the request's shape: webhook (Alertmanager's JSON), healthchecks, "
        "pagerduty, opsgenie")
    url: Secret | None = Field(
        None, description="where to send (pagerduty: https://events.pagerduty.com/v2/enqueue by default)")
    url_file: str | None = Field(None, description="a file holding the URL (read at start)")
    key: Secret | None = Field(
        None, description="PagerDuty routing key, Opsgenie API key, or a bearer token for webhook")
    key_file: str | None = Field(None, description="a file holding the key (read at start)")
    interval: Duration = Field(60.0, gt=0, description="one Watchdog every interval")
    timeout: Duration = Field(10.0, gt=0, description="per request")

    @model_validator(mode="after")
    def _one_source_each(self) -> HeartbeatSenderSpec:
        if self.url is not None and self.url_file is not None:
            raise ValueError("give url or url_file, not both")
        if self.key is not None and self.key_file is not None:
            raise ValueError("give key or key_file, not both")
        return self


class HeartbeatWatchSpec(FrozenModel):
    """One entry of ``heartbeats``: a sender this server expects to hear from."""

    name: str = Field(description="the heartbeat's name: POST /api/v1/heartbeats/NAME")
    expect_every: Duration = Field(60.0, gt=0, description="how often the sender sends")
    missing_after: Duration = Field(180.0, gt=0, description="silent this long: HeartbeatMissing pages")
    labels: dict[str, str] = Field(
        default_factory=dict, description="added to HeartbeatMissing (tier P0 unless set here)")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"{v!r}: letters, digits, '_', '.' and '-' only (it is a URL path segment)")
        return v

    @model_validator(mode="after")
    def _after_more_than_every(self) -> HeartbeatWatchSpec:
        if self.missing_after <= self.expect_every:
            raise ValueError(f"missing_after ({self.missing_after:g}s) must be longer than expect_every "
                             f"({self.expect_every:g}s): one late heartbeat must not page")
        return self


def check_heartbeats(v: tuple[HeartbeatWatchSpec, ...]) -> tuple[HeartbeatWatchSpec, ...]:
    """``heartbeats`` with unique names (``ValueError`` naming the repeated one)."""
    seen: set[str] = set()
    for hb in v:
        if hb.name in seen:
            raise ValueError(f"heartbeat {hb.name!r} is listed twice")
        seen.add(hb.name)
    return v
