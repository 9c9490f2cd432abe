"""On call: escalation policies, schedules and the alert history's retention.

    alerting:
      escalations:
        - name: p0
          steps:
            - {after: 0s, notify: [phone]}
            - {after: 5m, notify: [phone-secondary]}
            - {after: 15m, notify: [wecom, "schedule:ml-oncall/secondary"], repeat: 2, every: 10m}
      oncall:
        schedules:
          - name: ml-oncall
            timezone: Asia/Shanghai
            rotation: 7d
            handoff: "09:00"
            start: "2026-01-05"
            layers:
              - {name: primary, members: [{name: alice, contacts: {phone: "+8613800000001"}}, ...]}
            overrides:
              - {layer: primary, member: bob, start: "2026-12-24T18:00", end: "2026-12-26T09:00"}
      history: {retention: 90d, max_events: 1000000}
      route: {routes: [{matchers: ['tier="P0"'], receiver: phone, escalation: p0}]}

A step's ``notify`` names receivers or a schedule layer as ``schedule:NAME/LAYER``: the
notification goes to the receivers named in the on-call member's ``contacts`` keys.
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

from pydantic import Field, field_validator, model_validator

from inferwatch.settings._types import Duration, FrozenModel

__all__ = [
    "SCHEDULE_PREFIX",
    "EscalationSpec",
    "EscalationStep",
    "HistoryConfig",
    "LayerSpec",
    "MemberSpec",
    "OnCallConfig",
    "OverrideSpec",
    "ScheduleSpec",
    "parse_local_time",
]

SCHEDULE_PREFIX = "schedule:"
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def parse_local_time(text: str, where: str) -> dt.datetime:
    """An ISO date or date-time without a zone (read in the schedule's time zone)."""
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{where}: not an ISO date or date-time: {text!r}") from None
    if value.tzinfo is not None:
        raise ValueError(f"{where}: give a local time without a zone (the schedule's timezone applies)")
    return value


class EscalationStep(FrozenModel):
    """One step: notify these receivers (or schedule layers) ``after`` the group started firing."""

    after: Duration = 0.0
    notify: tuple[str, ...] = Field(min_length=1)
    repeat: int = Field(0, ge=0, le=100, description="send this step again this many times")
    every: Duration = Field(300.0, gt=0, description="between a step's repeats")


class EscalationSpec(FrozenModel):
    """A named escalation policy: ordered steps, each later than the one before."""

    name: str
    steps: tuple[EscalationStep, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _ordered(self) -> EscalationSpec:
        afters = [s.after for s in self.steps]
        if afters != sorted(afters):
            raise ValueError(f"escalation {self.name!r}: steps must be in order of 'after' ({afters})")
        return self


class MemberSpec(FrozenModel):
    """A person in a rotation: contacts by receiver name (a phone number, a chat user id, an e-mail)."""

    name: str
    contacts: dict[str, str] = Field(default_factory=dict)


class LayerSpec(FrozenModel):
    """A rotation layer (primary, secondary): members take turns of the schedule's rotation length."""

    name: str
    members: tuple[MemberSpec, ...] = Field(min_length=1)
    offset: int = Field(0, ge=0, description="start this many members into the rotation")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"layer name {v!r}: letters, digits, '_', '.', '-' only")
        return v


class OverrideSpec(FrozenModel):
    """Someone else holds ``layer`` from ``start`` to ``end`` (local times of the schedule)."""

    layer: str
    member: str
    start: str
    end: str
    contacts: dict[str, str] = Field(default_factory=dict, description="when the member is not in the layer")


class ScheduleSpec(FrozenModel):
    """A named rotation: hand-off at ``handoff`` (HH:MM) in ``timezone``, every ``rotation``."""

    name: str
    timezone: str = "UTC"
    rotation: Duration = Field(7 * 86400.0, gt=0)
    handoff: str = "09:00"
    start: str = "2026-01-05"
    layers: tuple[LayerSpec, ...] = Field(min_length=1)
    overrides: tuple[OverrideSpec, ...] = ()

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError(f"schedule name {v!r}: letters, digits, '_', '.', '-' only")
        return v

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        try:
            zoneinfo.ZoneInfo(v)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r} (an IANA name such as Asia/Shanghai)") from None
        return v

    @field_validator("handoff")
    @classmethod
    def _handoff(cls, v: str) -> str:
        if not re.match(r"^([01]\d|2[0-3]):[0-5]\d$", v):
            raise ValueError(f"handoff {v!r}: a time of day as HH:MM")
        return v

    @model_validator(mode="after")
    def _check(self) -> ScheduleSpec:
        parse_local_time(self.start, f"schedule {self.name!r} start")
        layers = {layer.name for layer in self.layers}
        if len(layers) != len(self.layers):
            raise ValueError(f"schedule {self.name!r}: layer names must be unique")
        for i, o in enumerate(self.overrides):
            where = f"schedule {self.name!r} overrides[{i}]"
            if o.layer not in layers:
                raise ValueError(f"{where}: unknown layer {o.layer!r} (known: {sorted(layers)})")
            if parse_local_time(o.end, f"{where}.end") <= parse_local_time(o.start, f"{where}.start"):
                raise ValueError(f"{where}: end must be after start")
        return self


class OnCallConfig(FrozenModel):
    """The on-call schedules."""

    schedules: tuple[ScheduleSpec, ...] = ()

    @model_validator(mode="after")
    def _unique(self) -> OnCallConfig:
        names = [s.name for s in self.schedules]
        if len(names) != len(set(names)):
            raise ValueError(f"schedule names must be unique: {sorted(names)}")
        return self

    def layer(self, ref: str) -> tuple[ScheduleSpec, LayerSpec] | None:
        """The schedule and layer of ``schedule:NAME/LAYER`` (``NAME`` alone: its first layer)."""
        name, _, layer = ref.removeprefix(SCHEDULE_PREFIX).partition("/")
        for s in self.schedules:
            if s.name == name:
                found = [x for x in s.layers if x.name == layer] if layer else [s.layers[0]]
                return (s, found[0]) if found else None
        return None


class HistoryConfig(FrozenModel):
    """How long alert history is kept, and at most how many events."""

    retention: Duration = Field(90 * 86400.0, gt=0)
    max_events: int = Field(1_000_000, ge=1000, description="oldest events dropped beyond this")
