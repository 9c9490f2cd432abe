"""``alerting.time_intervals``: named times of the week, month and year, as Alertmanager 0.25 writes them.

    alerting:
      time_intervals:
        - name: offhours
          time_intervals:
            - weekdays: ['saturday', 'sunday']
            - times: [{start_time: '18:00', end_time: '24:00'}]
              location: Asia/Shanghai
      route:
        routes:
          - {matchers: ['tier="P2"'], receiver: wecom, mute_time_intervals: [offhours]}

An interval holds a moment when every field it sets holds (an unset field holds always); a
named entry holds when any of its intervals does. Ranges are inclusive except ``times``,
whose end is exclusive (``24:00`` is the end of the day). ``days_of_month`` may count back
from the month's end (``-1`` is its last day). Times are read in ``location`` (UTC unless
set). Checked at load: names, order of each range, the zone.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import Field, field_validator

from inferwatch.settings._types import FrozenModel

__all__ = ["MONTHS", "WEEKDAYS", "TimeIntervalSpec", "TimeRange", "TimeSpec", "parse_range"]

WEEKDAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
_CLOCK = re.compile(r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$")


def _minute(text: str) -> int:
    if not _CLOCK.match(text):
        raise ValueError(f"{text!r} is not a time of day HH:MM (00:00 to 24:00)")
    hours, minutes = text.split(":")
    return int(hours) * 60 + int(minutes)


def _one(text: str, names: tuple[str, ...], first: int) -> int:
    word = text.strip().lower()
    if word in names:
        return names.index(word) + first
    if names is MONTHS and re.fullmatch(r"-?[0-9]+", word):
        return int(word)
    if names == () and re.fullmatch(r"-?[0-9]+", word):
        return int(word)
    raise ValueError(f"{text!r} is not one of {', '.join(names)}" if names else f"{text!r} is not a number")


def parse_range(text: Any, what: str, names: tuple[str, ...] = (), first: int = 0) -> tuple[int, int]:
    """``'monday:friday'``, ``'3'`` or ``'-3:-1'`` as an inclusive (begin, end)."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise ValueError(f"{what}: {text!r} is not a range such as 'a:b'")
    parts = text.split(":")
    if len(parts) > 2:
        raise ValueError(f"{what}: {text!r} is not a range such as 'a:b'")
    begin = _one(parts[0], names, first)
    end = _one(parts[-1], names, first)
    return begin, end


class TimeRange(FrozenModel):
    """A part of the day: from ``start_time`` up to, not including, ``end_time``."""

    start_time: str
    end_time: str

    @property
    def minutes(self) -> tuple[int, int]:
        """(start, end) in minutes of the day."""
        return _minute(self.start_time), _minute(self.end_time)

    @field_validator("end_time")
    @classmethod
    def _order(cls, v: str, info: Any) -> str:
        start = info.data.get("start_time")
        if start is not None and _minute(start) >= _minute(v):
            raise ValueError(f"start_time {start} must be before end_time {v}")
        return v


class TimeSpec(FrozenModel):
    """One interval: every field it sets must hold (Alertmanager's ``TimeInterval``)."""

    times: tuple[TimeRange, ...] = ()
    weekdays: tuple[str, ...] = ()
    days_of_month: tuple[str, ...] = ()
    months: tuple[str, ...] = ()
    years: tuple[str, ...] = ()
    location: str = Field("UTC", description="IANA time zone the fields are read in ('Local' is refused)")

    @field_validator("weekdays", "days_of_month", "months", "years", mode="before")
    @classmethod
    def _strings(cls, v: Any) -> Any:
        return tuple(str(x) for x in v) if isinstance(v, list | tuple) else v

    @field_validator("weekdays")
    @classmethod
    def _weekdays(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for r in v:
            begin, end = parse_range(r, "weekdays", WEEKDAYS)
            if begin > end:
                raise ValueError(f"weekdays: {r!r} starts after it ends")
        return v

    @field_validator("days_of_month")
    @classmethod
    def _days(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for r in v:
            begin, end = parse_range(r, "days_of_month")
            if not (1 <= abs(begin) <= 31 and 1 <= abs(end) <= 31):
                raise ValueError(f"days_of_month: {r!r}: days are 1 to 31 or -31 to -1")
            # Alertmanager's check: a negative day counted from a 30-day month, so '-3:31' passes
            if (30 + begin if begin < 0 else begin) > (30 + end if end < 0 else end):
                raise ValueError(f"days_of_month: {r!r} starts after it ends")
        return v

    @field_validator("months")
    @classmethod
    def _months(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for r in v:
            begin, end = parse_range(r, "months", MONTHS, 1)
            if not (1 <= begin <= 12 and 1 <= end <= 12) or begin > end:
                raise ValueError(f"months: {r!r} is not a range of months 1 to 12 in order")
        return v

    @field_validator("years")
    @classmethod
    def _years(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for r in v:
            begin, end = parse_range(r, "years")
            if begin <= 0 or begin > end:
                raise ValueError(f"years: {r!r} is not a range of years in order")
        return v

    @field_validator("location")
    @classmethod
    def _zone(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        if v == "Local":
            raise ValueError("location 'Local' depends on the machine; name the zone, e.g. Asia/Shanghai")
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r}") from None
        return v


class TimeIntervalSpec(FrozenModel):
    """A named list of intervals; a route mutes (or is active) while any of them holds."""

    name: str = Field(min_length=1)
    time_intervals: tuple[TimeSpec, ...] = ()
