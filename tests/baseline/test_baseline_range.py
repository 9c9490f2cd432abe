"""The long-memory range: a new low or high beyond the past weeks alerts after a slow drift."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.baseline import SeasonalBaseline, SeasonalSettings, alert_windows, score_series
from inferwatch.baseline._range import LongRange

STEP = 300.0
HOUR = 3600.0


def _alerts(t: np.ndarray, v: np.ndarray, cfg: SeasonalSettings) -> list[tuple[int, int]]:
    s = score_series(t, v, SeasonalBaseline(cfg))
    return [(w.start, w.end) for w in alert_windows(s.anomalous, v, s.expected, debounce=3,
                                                    merge_gap=144)]


def test_slow_drift_learned_by_the_band_alerts_as_a_new_high(daily: Callable[..., tuple]) -> None:
    # rule: a drift of a fifth of the daily swing per day is learned by the level (no point
    # or window alert), but once a peak passes every earlier one by 10 % of the range it alerts
    t, v = daily(16, seed=11)  # swing 40..60, noise 0.5
    start = int(9 * 86400 / STEP)
    v[start:] += np.arange(t.size - start) * (4.0 / 288)  # +4 a day from day 9
    # the point band alone (no window means, the 12-sample level): the range is what alerts
    point = SeasonalSettings(windows=(), level_points=12)
    assert _alerts(t, v, dataclasses.replace(point, range_horizon=0)) == []
    alerts = _alerts(t, v, point)
    assert alerts
    # the 9-day high is ~61.5 and the margin 10 % of the ~22 range: ~63.7, first passed by
    # the peak of day 10 (~64.5); each later alert is a daily peak beyond every earlier value
    assert 10.0 < t[alerts[0][0]] / 86400 < 10.5
    for start, end in alerts:
        assert v[start : end + 1].max() > v[:start].max()


def test_no_alert_on_a_stationary_series_with_the_range_on(daily: Callable[..., tuple]) -> None:
    # rule: a series that stays within its own past never reaches the range's margin
    t, v = daily(20, seed=12)
    assert _alerts(t, v, SeasonalSettings()) == []


def test_range_never_widens_the_band(daily: Callable[..., tuple]) -> None:
    t, v = daily(10, seed=13)
    v[int(8.5 * 86400 / STEP):] -= 8.0  # a step down: the range pulls the lower bound up
    plain = SeasonalBaseline(SeasonalSettings(range_horizon=0))
    ranged = SeasonalBaseline(SeasonalSettings())
    narrowed = 0
    for ti, vi in zip(t, v, strict=True):
        a, b = plain.predict(ti), ranged.predict(ti)
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert b.expected == a.expected and a.lower <= b.lower and b.upper <= a.upper
            narrowed += b.lower > a.lower or b.upper < a.upper
        plain.learn(ti, vi)
        ranged.learn(ti, vi)
    assert narrowed > 0


def test_bounds_leave_out_the_recent_slots_and_forget_the_old_ones() -> None:
    r = LongRange(slot=HOUR, horizon=10 * HOUR, exclude=2 * HOUR, min_history=0.0)
    for h in range(30):
        r.learn(h * HOUR, 100.0 if h == 5 else float(h))
    # at hour 30: slots 20..27 count (27 is the newest with 2 whole hours after it)
    assert r.bounds(30 * HOUR) == (20.0, 27.0)
    assert r.bounds(30 * HOUR + 1800.0) == (20.0, 27.0)  # same slot: same bounds
    assert r.size() <= 3 * 10  # one (slot, low, high) per slot of the horizon


def test_min_history_and_an_empty_span_give_no_bounds() -> None:
    r = LongRange(slot=HOUR, horizon=10 * HOUR, exclude=2 * HOUR, min_history=5 * HOUR)
    assert r.bounds(0.0) is None
    for h in range(6):
        r.learn(h * HOUR, 1.0)
    assert r.bounds(4 * HOUR) is None  # under 5 hours of history
    assert r.bounds(6 * HOUR) == (1.0, 1.0)
    assert r.bounds(40 * HOUR) is None  # every kept slot is older than the horizon


def test_a_gap_longer_than_the_exclusion_still_counts_the_last_slot() -> None:
    # the slot being filled is flushed only by the next point: after a long gap it must count
    r = LongRange(slot=HOUR, horizon=100 * HOUR, exclude=2 * HOUR, min_history=0.0)
    r.learn(0.0, 3.0)
    r.learn(1800.0, 9.0)
    assert r.bounds(50 * HOUR) == (3.0, 9.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=200), st.integers(1, 24),
       st.integers(0, 5))
def test_bounds_are_the_min_and_max_of_the_span(xs: list[float], horizon: int, exclude: int) -> None:
    # rule: with one point an hour, the bounds at hour n are min/max of hours n-horizon..n-exclude-1
    if exclude >= horizon:
        exclude = horizon - 1
    r = LongRange(slot=HOUR, horizon=horizon * HOUR, exclude=exclude * HOUR, min_history=0.0)
    for h, x in enumerate(xs):
        r.learn(h * HOUR, x)
    n = len(xs)
    span = xs[max(0, n - horizon) : max(0, n - exclude)]
    assert r.bounds(n * HOUR) == ((min(span), max(span)) if span else None)


def test_range_state_round_trips_and_old_states_load(daily: Callable[..., tuple]) -> None:
    cfg = SeasonalSettings(range_min_history=86400.0, range_horizon=2 * 86400.0,
                         range_exclude=6 * HOUR)
    t, v = daily(4, seed=14)
    b = SeasonalBaseline(cfg)
    for ti, vi in zip(t, v, strict=True):
        b.predict(ti)
        b.learn(ti, vi)
    state = json.loads(json.dumps(b.to_state()))
    assert SeasonalBaseline.from_state(state).predict(t[-1] + STEP) == b.predict(t[-1] + STEP)
    del state["range"]  # a state saved before the range existed: the range starts afresh
    old = SeasonalBaseline.from_state(state)
    assert old.predict(t[-1] + STEP) is not None
    assert old.state_size() < b.state_size()


@pytest.mark.parametrize(("horizon", "exclude"), [(3600.0, 43200.0), (43200.0, 43200.0)])
def test_a_horizon_within_its_exclusion_is_refused(horizon: float, exclude: float) -> None:
    with pytest.raises(ValueError, match="range_horizon must exceed range_exclude"):
        SeasonalSettings(range_horizon=horizon, range_exclude=exclude)


def test_adopting_a_shorter_range_warm_up_keeps_what_was_learned(
        daily: Callable[..., tuple]) -> None:
    # rule: range_min_history is a threshold: a learned baseline adopts a new one in place and
    # then bands exactly like one that had it from the start; a new span is refused instead
    short = SeasonalSettings(range_min_history=86400.0, range_horizon=2 * 86400.0,
                           range_exclude=6 * HOUR)
    long = dataclasses.replace(short, range_min_history=7 * 86400.0)
    t, v = daily(4, seed=15)
    cut = int((3 * 86400 + 5 * HOUR) / STEP)  # just before day 3's peak (6 h), where the
    peak = t[cut : cut + 24]                   # range's high + margin is under the band's top
    learned, always = SeasonalBaseline(long), SeasonalBaseline(short)
    for ti, vi in zip(t[:cut], v[:cut], strict=True):
        for b in (learned, always):
            b.predict(ti)
            b.learn(ti, vi)
    assert any(learned.predict(ti) != always.predict(ti) for ti in peak)  # range in one only
    assert not learned.adopt(dataclasses.replace(short, range_horizon=3 * 86400.0))
    assert learned.adopt(short)
    assert all(learned.predict(ti) == always.predict(ti) for ti in peak)
