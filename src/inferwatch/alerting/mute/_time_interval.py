"""Is a moment inside a named time interval? Alertmanager 0.25's ``timeinterval`` semantics.

A route with ``mute_time_intervals`` sends nothing while one of them holds; one with
``active_time_intervals`` sends only while one holds. Either way the group goes on as
usual (it is flushed, its alerts stay), only the notification is not sent: the flush
after the interval sends what is then true, as Alertmanager does.

>>> from inferwatch.settings import TimeIntervalSpec
>>> weekend = TimeIntervalSpec.model_validate(
...     {"name": "weekend", "time_intervals": [{"weekdays": ["saturday", "sunday"]}]})
>>> TimeIntervals([weekend]).holds("weekend", 1_700_000_000.0)  # 2023-11-14, a Tuesday
False
>>> TimeIntervals([weekend]).holds("weekend", 1_700_352_000.0)  # 2023-11-19, a Sunday
True
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from inferwatch.settings import MONTHS, WEEKDAYS, TimeIntervalSpec, TimeSpec, parse_range

__all__ = ["TimeIntervals", "interval_holds"]


def _in_any(value: int, ranges: Iterable[tuple[int, int]]) -> bool:
    return any(begin <= value <= end for begin, end in ranges)


def _day_holds(ranges: Sequence[str], t: datetime) -> bool:
    days = calendar.monthrange(t.year, t.month)[1]
    for text in ranges:
        begin, end = parse_range(text, "days_of_month")
        begin = days + begin + 1 if begin < 0 else begin
        end = days + end + 1 if end < 0 else end
        if begin > days:  # the 31st of a 30-day month never comes
            continue
        if max(begin, -days) <= t.day <= min(end, days):
            return True
    return False


def interval_holds(spec: TimeSpec, at: float) -> bool:
    """Whether every field ``spec`` sets holds at Unix time ``at`` (read in its location)."""
    t = datetime.fromtimestamp(at, UTC).astimezone(ZoneInfo(spec.location))
    if spec.times:
        minute = t.hour * 60 + t.minute
        if not any(start <= minute < end for start, end in (r.minutes for r in spec.times)):
            return False
    if spec.days_of_month and not _day_holds(spec.days_of_month, t):
        return False
    weekday = (t.weekday() + 1) % 7  # Go's time.Weekday: Sunday is 0
    if spec.weekdays and not _in_any(weekday, (parse_range(r, "weekdays", WEEKDAYS) for r in spec.weekdays)):
        return False
    if spec.months and not _in_any(t.month, (parse_range(r, "months", MONTHS, 1) for r in spec.months)):
        return False
    return not spec.years or _in_any(t.year, (parse_range(r, "years") for r in spec.years))


class TimeIntervals:
    """The named intervals of a config, asked by name."""

    def __init__(self, specs: Iterable[TimeIntervalSpec]) -> None:
        self._specs = {s.name: s.time_intervals for s in specs}

    def holds(self, name: str, at: float) -> bool:
        """Whether any interval of ``name`` holds at ``at`` (an unknown name never holds)."""
        return any(interval_holds(s, at) for s in self._specs.get(name, ()))

    def muted(self, mute: Sequence[str], active: Sequence[str], at: float) -> str:
        """Why a route with these intervals sends nothing at ``at`` ("" when it sends)."""
        for name in mute:
            if self.holds(name, at):
                return f"mute time interval {name!r}"
        if active and not any(self.holds(name, at) for name in active):
            return f"outside its active time intervals {', '.join(active)}"
        return ""
