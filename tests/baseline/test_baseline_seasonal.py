"""The seasonal baseline: detection, re-learning, fallback, bounded state, persistence."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.baseline import (
    SeasonalBaseline,
    SeasonalSettings,
    alert_windows,
    score_series,
)
from inferwatch.baseline._ring import Ring, _median, robust_sigma, robust_sigma_and_tail

STEP = 300.0
# the point band alone: the default before window means became the default (12-sample level)
POINT_BAND = SeasonalSettings(windows=(), level_points=12)


def _alerts(t: np.ndarray, v: np.ndarray, cfg: SeasonalSettings | None = None) -> list[tuple[int, int]]:
    s = score_series(t, v, SeasonalBaseline(cfg))
    return [(w.start, w.end) for w in alert_windows(s.anomalous, v, s.expected, debounce=3,
                                                    merge_gap=12)]


def test_injected_spike_on_a_seasonal_series_is_the_only_alert(daily: Callable[..., tuple]) -> None:
    # rule: a 30-minute excursion of 8 noise-sigmas on day 5 is found, the clean days are quiet;
    # the point band alone is over within the hour, the default within two (the 24-sample
    # window mean carries the excursion's residuals for 24 samples)
    t, v = daily(6, seed=1)
    at = int(5.3 * 86400 / STEP)
    v[at : at + 6] += 8.0
    for cfg, over in ((POINT_BAND, 12), (None, 24)):
        alerts = _alerts(t, v, cfg)
        assert len(alerts) == 1
        start, end = alerts[0]
        assert at <= start <= at + 3 and end <= at + over


def test_seasonality_is_learned_so_the_daily_swing_never_alerts(daily: Callable[..., tuple]) -> None:
    # rule: a swing of ±10 with noise 0.5 is expected behaviour once the daily profile exists
    t, v = daily(4, seed=2)
    b = SeasonalBaseline()
    s = score_series(t, v, b)
    assert not s.anomalous.any()
    assert b.model in ("daily", "flat")
    day3 = slice(int(3 * 86400 / STEP), None)
    assert np.nanmax(np.abs(s.expected[day3] - v[day3])) < 5.0  # tracks the swing, not the mean


def test_level_shift_is_relearned_not_alerted_forever(daily: Callable[..., tuple]) -> None:
    # rule: after a permanent jump the band moves to the new level within a few hours
    t, v = daily(6, seed=3)
    at = int(4 * 86400 / STEP)
    v[at:] += 30.0
    s = score_series(t, v, SeasonalBaseline())
    assert s.anomalous[at : at + 3].all()  # the jump itself is anomalous
    later = slice(at + int(4 * 3600 / STEP), None)  # from 4 hours after the jump on
    assert s.anomalous[later].mean() < 0.01


def test_short_history_has_no_band_so_the_static_fallback_applies() -> None:
    # rule: before min_history (2 days by default) predict() is None, from then on a band
    b = SeasonalBaseline()
    for i in range(575):  # 575 * 5 min < 2 days
        assert b.predict(i * STEP) is None
        b.learn(i * STEP, 1.0)
    for i in range(575, 600):
        b.learn(i * STEP, 1.0)
    assert b.predict(600 * STEP) is not None


def test_state_is_bounded_whatever_the_history_length() -> None:
    # rule: O(1) per point: the state stops growing once the rings are full
    cfg = SeasonalSettings(days=2, weeks=1, slot_capacity=4, scale_points=64, min_points=16,
                         range_horizon=3 * 86400.0)
    b = SeasonalBaseline(cfg)
    sizes = []
    rng = np.random.default_rng(4)
    for day in range(16):  # the weekly rings fill during the second week
        for i in range(288):
            t = (day * 288 + i) * STEP
            b.predict(t)
            b.learn(t, float(rng.normal()))
        sizes.append(b.state_size())
    bound = (2 * (48 + 336) * 4 + 3 * (cfg.level_points + cfg.scale_points)  # rings' capacities
             + 3 * (max(cfg.windows) + len(cfg.windows) * cfg.scale_points)  # window means
             + 3 * 72)  # the long-memory range: 3 days of hourly (slot, low, high)
    assert sizes[-1] == sizes[-2] <= bound
    assert len(json.dumps(b.to_state())) < 400_000


@pytest.mark.parametrize("windowed", [False, True])
def test_restored_state_continues_exactly(daily: Callable[..., tuple], windowed: bool) -> None:
    # rule: persistence round trip through JSON gives identical bands afterwards (window means
    # too, and the long-memory range, here in force from day 1 of the 3)
    ranged = SeasonalSettings(range_horizon=2 * 86400.0, range_exclude=6 * 3600.0,
                            range_min_history=86400.0)
    cfg = dataclasses.replace(ranged, **({"windows": (6, 24), "level_points": 144} if windowed else {}))
    t, v = daily(3, seed=7 if windowed else 5)
    half = t.size // 2
    straight = SeasonalBaseline(cfg)
    split = SeasonalBaseline(cfg)
    for ti, vi in zip(t[:half], v[:half], strict=True):
        for b in (straight, split):
            b.predict(ti)
            b.learn(ti, vi)
    restored = SeasonalBaseline.from_state(json.loads(json.dumps(split.to_state())))
    for ti, vi in zip(t[half:], v[half:], strict=True):
        assert straight.predict(ti) == restored.predict(ti)
        straight.learn(ti, vi)
        restored.learn(ti, vi)
    assert straight.to_state() == restored.to_state()


def test_malformed_state_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="seasonal baseline state"):
        SeasonalBaseline.from_state({"config": {}})


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_values_are_skipped_not_raised(value: float) -> None:
    # rule: the hot path never raises; odd values are not learned
    b = SeasonalBaseline()
    b.learn(0.0, 1.0)
    b.learn(STEP, value)
    assert b.to_state()["points"] == 1


def test_flat_series_gets_a_nonzero_band() -> None:
    # rule: a constant series has MAD 0; the relative floor keeps the band from collapsing
    b = SeasonalBaseline(SeasonalSettings(min_history=0, min_points=16, scale_points=64))
    for i in range(100):
        b.learn(i * STEP, 45.0)
    band = b.predict(100 * STEP)
    assert band is not None and band.lower < 45.0 < band.upper and band.upper - band.lower < 1.0


@settings(max_examples=25, deadline=None)
@given(offset=st.floats(-1e4, 1e4), seed=st.integers(0, 2**16))
def test_band_moves_with_the_series(offset: float, seed: int) -> None:
    # property: adding a constant to every value shifts expected and band by that constant
    cfg = SeasonalSettings(min_history=0, min_points=16, scale_points=64, relative_floor=0.0)
    rng = np.random.default_rng(seed)
    v = rng.normal(0, 1, 80)
    a, b = SeasonalBaseline(cfg), SeasonalBaseline(cfg)
    for i, x in enumerate(v):
        a.learn(i * STEP, float(x))
        b.learn(i * STEP, float(x) + offset)
    pa, pb = a.predict(80 * STEP), b.predict(80 * STEP)
    assert pa is not None and pb is not None
    assert pb.expected == pytest.approx(pa.expected + offset, abs=1e-6)
    assert pb.upper - pb.lower == pytest.approx(pa.upper - pa.lower, rel=1e-6, abs=1e-6)
    # the bounds shift too (not "expected inside the band": the window bounds may exclude the
    # expected value itself when the recent residuals already sit outside a window's band)
    assert pb.lower == pytest.approx(pa.lower + offset, abs=1e-6)
    assert pb.upper == pytest.approx(pa.upper + offset, abs=1e-6)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50), st.integers(1, 20))
def test_ring_keeps_exactly_the_last_values(xs: list[float], cap: int) -> None:
    # property: a ring holds the last `capacity` pushes, restorable from its state
    r = Ring(cap)
    for x in xs:
        r.push(x)
    assert sorted(r.values().tolist()) == sorted(xs[-cap:])
    assert r.last() == xs[-1]
    assert sorted(Ring.from_state(r.to_state()).values().tolist()) == sorted(xs[-cap:])


def test_ring_state_is_compact_and_the_older_form_still_loads() -> None:
    # rule: the state keeps only the kept values (no unused capacity), restores them exactly,
    # and states saved in the older buf/head/count form (before 2026-12-03) still load
    r = Ring(1000)
    for x in (0.1, 0.2, 0.30000000000000004):
        r.push(x)
    state = r.to_state()
    assert len(json.dumps(state)) < 100  # three values, not a thousand
    back = Ring.from_state(state)
    assert back.values().tolist() == [0.1, 0.2, 0.30000000000000004] and back.capacity == 1000
    legacy = Ring.from_state({"buf": [4.0, 2.0, 3.0], "head": 1, "count": 3})
    assert sorted(legacy.values().tolist()) == [2.0, 3.0, 4.0] and legacy.last() == 4.0
    with pytest.raises(ValueError):
        Ring.from_state({"cap": 2, "f8": "not base64!"})
    with pytest.raises(ValueError):
        Ring.from_state({"cap": 1, "f8": Ring.from_state(state).to_state()["f8"]})  # 3 > capacity


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=80), st.integers(1, 20))
def test_ordered_ring_median_is_numpys_exactly(xs: list[float], cap: int) -> None:
    # property: the sorted copy gives numpy's median bit for bit, after wrap-around and restore
    r = Ring(cap, ordered=True)
    for i, x in enumerate(xs):
        r.push(x)
        assert r.median() == float(np.median(xs[max(0, i + 1 - cap) : i + 1]))
    assert Ring.from_state(r.to_state(), ordered=True).median() == r.median()


@given(st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=60), st.floats(0.1, 100))
def test_robust_sigma_is_scale_equivariant(xs: list[float], k: float) -> None:
    # property: sigma(k x) = k sigma(x) and it is never negative
    x = np.asarray(xs)
    assert robust_sigma(x) >= 0
    assert robust_sigma(k * x) == pytest.approx(k * robust_sigma(x), rel=1e-6, abs=1e-9)


@given(st.lists(st.floats(-1e9, 1e9), min_size=1, max_size=80), st.floats(0.01, 1.0))
def test_refresh_statistics_are_numpys_bit_for_bit(xs: list[float], q: float) -> None:
    # property: the shared-median refresh gives exactly what numpy's median and quantile give
    # (the bands, and so every alert, are unchanged by the faster path)
    x = np.asarray(xs)
    assert _median(x) == float(np.median(x))
    sigma, tail = robust_sigma_and_tail(x, q)
    assert sigma == robust_sigma(x)
    assert tail == float(np.quantile(np.abs(x - np.median(x)), q))


WINDOWED = SeasonalSettings(windows=(6, 24), level_points=144)


def test_sustained_small_shift_is_caught_by_window_means_only(daily: Callable[..., tuple]) -> None:
    # rule: a 2-hour shift of 3 noise-sigmas stays inside the point band but moves the
    # 6- and 24-sample residual means out of theirs; the clean days stay quiet either way
    t, v = daily(6, seed=3)
    at = int(5.3 * 86400 / STEP)
    v[at : at + 24] += 1.5  # noise sigma is 0.5
    assert _alerts(t, v, POINT_BAND) == []
    assert _alerts(t, v) == _alerts(t, v, WINDOWED)  # window means are the default
    alerts = _alerts(t, v, WINDOWED)
    assert len(alerts) == 1
    assert at <= alerts[0][0] <= at + 12


def test_window_band_folds_into_the_returned_band(daily: Callable[..., tuple]) -> None:
    # rule: the band never widens with windows on, and after residuals that ran hot the
    # upper bound comes down (a value that would keep the window mean high is flagged)
    t, v = daily(4, seed=6)
    plain = SeasonalBaseline(dataclasses.replace(WINDOWED, windows=()))
    windowed = SeasonalBaseline(WINDOWED)
    narrowed = 0
    for ti, vi in zip(t, v, strict=True):
        a, b = plain.predict(ti), windowed.predict(ti)
        if a is not None and b is not None:
            assert b.expected == a.expected
            assert a.lower <= b.lower and b.upper <= a.upper
            narrowed += b.upper < a.upper
        plain.learn(ti, vi)
        windowed.learn(ti, vi)
    assert narrowed > 0


def test_states_saved_before_window_means_still_load(daily: Callable[..., tuple]) -> None:
    t, v = daily(3, seed=7)
    b = SeasonalBaseline(WINDOWED)
    for ti, vi in zip(t, v, strict=True):
        b.predict(ti)
        b.learn(ti, vi)
    old = b.to_state()  # a state saved before window means existed
    for cand in old["candidates"].values():
        del cand["recent"], cand["windows"]
    assert SeasonalBaseline.from_state(old).predict(t[-1] + STEP) is not None


@pytest.mark.parametrize("windows", [(1,), (6, 2000)])
def test_window_lengths_out_of_range_are_refused(windows: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match=r"windows must each be 2\.\.1024 samples"):
        SeasonalSettings(windows=windows)
