"""Alertmanager 0.25's time intervals: the table of what holds when, and routes muted on simulated time."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import ConfigError
from inferwatch.alerting import Pipeline, RecordingNotifier
from inferwatch.alerting.mute import interval_holds
from inferwatch.config import TimeSpec, parse_config
from inferwatch.model import SimulatedClock


def _t(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() if "+" not in text \
        else datetime.fromisoformat(text).timestamp()


@pytest.mark.parametrize(("spec", "at", "holds"), [
    # times: the end is exclusive; 24:00 is the end of the day
    ({"times": [{"start_time": "09:00", "end_time": "17:00"}]}, "2026-12-07 09:00", True),
    ({"times": [{"start_time": "09:00", "end_time": "17:00"}]}, "2026-12-07 17:00", False),
    ({"times": [{"start_time": "22:00", "end_time": "24:00"}]}, "2026-12-07 23:59", True),
    # weekdays: inclusive ranges by name (2026-12-07 is a Monday, 12-06 a Sunday)
    ({"weekdays": ["monday:friday"]}, "2026-12-07 12:00", True),
    ({"weekdays": ["monday:friday"]}, "2026-12-06 12:00", False),
    ({"weekdays": ["Sunday"]}, "2026-12-06 12:00", True),
    # days_of_month: negative days count back from the month's end
    ({"days_of_month": ["-1"]}, "2026-02-28 12:00", True),
    ({"days_of_month": ["-1"]}, "2026-12-30 12:00", False),
    ({"days_of_month": ["1:5"]}, "2026-12-05 23:59", True),
    ({"days_of_month": ["31"]}, "2026-11-30 12:00", False),  # the 31st of a 30-day month never comes
    # months by name or number; years
    ({"months": ["november:december"]}, "2026-12-07 00:00", True),
    ({"months": ["1:3"]}, "2026-12-07 00:00", False),
    ({"years": ["2025:2027"]}, "2026-12-07 00:00", True),
    # every field set must hold
    ({"weekdays": ["monday"], "times": [{"start_time": "00:00", "end_time": "01:00"}]},
     "2026-12-07 02:00", False),
    # read in the location: 17:30 UTC is 01:30 the next day in Shanghai (a Tuesday)
    ({"weekdays": ["tuesday"], "location": "Asia/Shanghai"}, "2026-12-07 17:30", True),
    ({}, "2026-12-07 17:30", True),  # nothing set: always
])
def test_interval_holds_as_alertmanager_reads_it(spec: dict[str, object], at: str, holds: bool) -> None:
    assert interval_holds(TimeSpec.model_validate(spec), _t(at)) is holds


@pytest.mark.parametrize(("spec", "problem"), [
    ({"times": [{"start_time": "17:00", "end_time": "09:00"}]}, "must be before"),
    ({"times": [{"start_time": "9:00", "end_time": "10:00"}]}, "not a time of day"),
    ({"weekdays": ["friday:monday"]}, "starts after it ends"),
    ({"weekdays": ["funday"]}, "is not one of"),
    ({"days_of_month": ["0"]}, "days are 1 to 31"),
    ({"months": ["13"]}, "months 1 to 12"),
    ({"location": "Mars/Base"}, "unknown time zone"),
])
def test_a_bad_interval_is_refused_at_load(spec: dict[str, object], problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse_config(f"alerting: {{time_intervals: [{{name: x, time_intervals: [{spec}]}}]}}")


def test_routes_naming_unknown_or_root_intervals_are_refused() -> None:
    with pytest.raises(ConfigError, match="unknown time intervals"):
        parse_config("alerting: {route: {receiver: terminal, routes: [{receiver: wecom, "
                     "mute_time_intervals: [nope]}]}}")
    with pytest.raises(ConfigError, match="root route cannot"):
        parse_config("alerting: {time_intervals: [{name: a}], route: {receiver: terminal, "
                     "mute_time_intervals: [a]}}")


CONFIG = """
alerting:
  time_intervals:
    - name: nights
      time_intervals: [{times: [{start_time: '00:00', end_time: '08:00'}]}]
  route:
    receiver: terminal
    group_wait: 10s
    group_interval: 1m
    routes:
      - {matchers: ['tier="P2"'], receiver: wecom, mute_time_intervals: [nights]}
      - {matchers: ['tier="P1"'], receiver: phone, active_time_intervals: [nights]}
"""


def test_a_muted_route_sends_after_its_interval_and_an_active_one_only_inside() -> None:
    # rule: a flush inside a mute interval sends nothing; the first flush after it sends what is then true
    cfg = parse_config(CONFIG).alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    day = _t("2026-12-07 00:00")
    p = Pipeline(cfg, clock=SimulatedClock(day), notifiers=recs, actions=[], rng=random.Random(1))
    p.send([alert(start=day, tier="P2"), alert("Slow", start=day)], now=day)
    p.tick(day + 10)
    assert recs["wecom"].sent == [] and len(recs["phone"].sent) == 1
    for minute in range(1, 8 * 60 + 1):  # the evaluator resends it; a flush every group_interval
        now = day + 10 + 60 * minute  # the last one at 08:00:10: the night is over
        p.send([alert(start=day, tier="P2")], now=now)
        if minute < 8 * 60:
            p.tick(now)
            assert recs["wecom"].sent == [], minute
    p.tick(now)
    assert len(recs["wecom"].sent) == 1 and recs["wecom"].sent[0].alerts[0].labels["tier"] == "P2"
