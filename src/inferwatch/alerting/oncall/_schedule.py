"""On-call schedules: who holds each layer at a time, and who is next.

Turns follow the schedule's local wall time: a 7-day rotation with hand-off at
09:00 in Asia/Shanghai hands off at 09:00 there every week, whatever the UTC
offset does in between (zoneinfo resolves the local times). An override holds
a layer from its start to its end, local times too.
"""

from __future__ import annotations

import datetime as dt
import math
import zoneinfo
from dataclasses import dataclass

from inferwatch.settings import LayerSpec, OnCallConfig, ScheduleSpec, parse_local_time

__all__ = ["Shift", "oncall_at", "shifts"]


@dataclass(frozen=True, slots=True)
class Shift:
    """Who holds a layer from ``start`` to ``end`` (epoch seconds), with their contacts."""

    schedule: str
    layer: str
    member: str
    contacts: tuple[tuple[str, str], ...]
    start: float
    end: float
    override: bool = False

    def to_json(self) -> dict[str, object]:
        """The API shape (contacts are shown: they are how the team reaches the person)."""
        return {"schedule": self.schedule, "layer": self.layer, "member": self.member,
                "contacts": dict(self.contacts), "start": self.start, "end": self.end,
                "override": self.override}


def _epoch(local: dt.datetime, tz: zoneinfo.ZoneInfo) -> float:
    return local.replace(tzinfo=tz).timestamp()


def _first_handoff(spec: ScheduleSpec) -> dt.datetime:
    start = parse_local_time(spec.start, f"schedule {spec.name!r} start")
    hh, mm = (int(x) for x in spec.handoff.split(":"))
    return start.replace(hour=hh, minute=mm, second=0, microsecond=0)


def _rotation_shift(spec: ScheduleSpec, layer: LayerSpec, t: float) -> Shift:
    tz = zoneinfo.ZoneInfo(spec.timezone)
    first = _first_handoff(spec)
    local = dt.datetime.fromtimestamp(t, tz).replace(tzinfo=None)
    turn = math.floor((local - first).total_seconds() / spec.rotation)
    begin = first + dt.timedelta(seconds=turn * spec.rotation)
    member = layer.members[(turn + layer.offset) % len(layer.members)]
    return Shift(spec.name, layer.name, member.name, tuple(sorted(member.contacts.items())),
                 _epoch(begin, tz), _epoch(begin + dt.timedelta(seconds=spec.rotation), tz))


def _override(spec: ScheduleSpec, layer: LayerSpec, t: float) -> Shift | None:
    tz = zoneinfo.ZoneInfo(spec.timezone)
    for o in spec.overrides:
        if o.layer != layer.name:
            continue
        start = _epoch(parse_local_time(o.start, "override start"), tz)
        end = _epoch(parse_local_time(o.end, "override end"), tz)
        if start <= t < end:
            known = next((m.contacts for m in layer.members if m.name == o.member), {})
            contacts = {**known, **o.contacts}
            return Shift(spec.name, layer.name, o.member, tuple(sorted(contacts.items())), start, end, True)
    return None


def oncall_at(spec: ScheduleSpec, layer: LayerSpec, t: float) -> Shift:
    """The shift holding ``layer`` at ``t``: an override, else the rotation's turn."""
    found = _override(spec, layer, t)
    turn = _rotation_shift(spec, layer, t)
    if found is None:
        # An override starting inside this turn cuts it short.
        starts = [s for s in _override_starts(spec, layer) if t < s < turn.end]
        return turn if not starts else Shift(turn.schedule, turn.layer, turn.member, turn.contacts,
                                             turn.start, min(starts))
    return found


def _override_starts(spec: ScheduleSpec, layer: LayerSpec) -> list[float]:
    tz = zoneinfo.ZoneInfo(spec.timezone)
    return [_epoch(parse_local_time(o.start, "override start"), tz) for o in spec.overrides
            if o.layer == layer.name]


def shifts(config: OnCallConfig, t: float) -> list[dict[str, object]]:
    """For every schedule and layer: the shift now and the next one."""
    out: list[dict[str, object]] = []
    for spec in config.schedules:
        for layer in spec.layers:
            now = oncall_at(spec, layer, t)
            nxt = oncall_at(spec, layer, now.end)
            out.append({"schedule": spec.name, "layer": layer.name, "timezone": spec.timezone,
                        "now": now.to_json(), "next": nxt.to_json()})
    return out
