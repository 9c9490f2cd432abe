"""The recurrence hold: an excursion that only repeats the series' earlier ones does not alert."""

from __future__ import annotations

import dataclasses
import doctest
from collections.abc import Iterable

import numpy as np
import pytest

from inferwatch.baseline import (
    BaselineSettings,
    RecurrenceGate,
    SeasonalBaseline,
    SeasonalSettings,
    _recurrence,
    alert_windows,
    recurrence_gate,
    score_series,
)

DAY = 86400.0


def _feed(gate: RecurrenceGate, points: Iterable[tuple[float, float, bool]], expected: float = 30.0,
          ) -> list[bool]:
    return [gate.step(t, v, expected, out) for t, v, out in points]


def _burst(t: float, peak: float, width: int = 3, gap_after: int = 3) -> list[tuple[float, float, bool]]:
    """``width`` out-of-band points at ``peak``, then ``gap_after`` in-band points at 30."""
    out = [(t + i, peak, True) for i in range(width)]
    return out + [(t + width + i, 30.0, False) for i in range(gap_after)]


def _gate(count: int = 2, horizon: float = 28 * DAY, gap: int = 2, debounce: int = 3) -> RecurrenceGate:
    return RecurrenceGate(count, horizon, gap, debounce)


def test_the_third_burst_to_the_same_height_is_held() -> None:
    # rule: the first `count` excursions alert; one within their count-th peak is held throughout
    g = _gate()
    first, second, third = (_feed(g, _burst(t, 100.0)) for t in (0.0, 100.0, 200.0))
    assert first[:3] == [True] * 3 and second[:3] == [True] * 3
    assert third[:3] == [False] * 3
    assert not g.held  # the excursion ended after more than `gap` in-band points


def test_a_burst_beyond_the_familiar_peak_is_released_from_its_first_point_beyond() -> None:
    # rule: held while within the count-th highest peak, released from the first value beyond it,
    # and stays released for the rest of the excursion (even back under the peak)
    g = _gate()
    for t in (0.0, 100.0):
        _feed(g, _burst(t, 100.0))
    got = _feed(g, [(200.0, 90.0, True), (201.0, 100.0, True), (202.0, 120.0, True),
                    (203.0, 95.0, True)])
    assert got == [False, False, True, True]
    assert g.familiar(True, 204.0) == 100.0


def test_the_count_th_peak_is_the_level_to_pass() -> None:
    # rule: with count 2 the second-highest earlier peak must be passed, not the highest
    g = _gate()
    for t, peak in ((0.0, 150.0), (100.0, 100.0), (200.0, 80.0)):
        _feed(g, _burst(t, peak))
    assert g.familiar(True, 300.0) == 100.0
    assert _feed(g, [(300.0, 110.0, True)]) == [True]


def test_a_drop_is_not_familiar_because_of_earlier_bursts() -> None:
    # rule: peaks are kept per side; a first excursion below the band alerts
    g = _gate()
    for t in (0.0, 100.0):
        _feed(g, _burst(t, 100.0))
    assert g.familiar(False, 200.0) is None
    assert _feed(g, _burst(200.0, 5.0))[:3] == [True] * 3


def test_excursions_older_than_the_horizon_are_forgotten() -> None:
    # rule: only excursions that ended within `horizon` seconds count
    g = _gate(horizon=1000.0)
    for t in (0.0, 100.0):
        _feed(g, _burst(t, 100.0))
    assert _feed(g, _burst(500.0, 100.0))[0] is False  # both earlier bursts within 1000 s
    assert _feed(g, _burst(1200.0, 100.0))[0] is True  # only the burst at 500 s left


def test_blips_shorter_than_the_debounce_are_not_excursions() -> None:
    # rule: a run that never reached `debounce` points in a row never alerted: not remembered
    g = _gate()
    for t in (0.0, 100.0, 200.0):
        _feed(g, _burst(t, 100.0, width=2))
    assert g.familiar(True, 300.0) is None
    assert _feed(g, _burst(300.0, 100.0))[0] is True


def test_an_excursion_bridges_up_to_gap_in_band_points() -> None:
    # rule: in-band points within the merge gap keep the held excursion open (still held);
    # one more ends it, and the next one is judged afresh
    g = _gate(gap=2)
    for t in (0.0, 100.0):
        _feed(g, _burst(t, 100.0))
    pts = [(200.0, 100.0, True)] * 3 + [(203.0, 30.0, False)] * 2 + [(205.0, 100.0, True)]
    assert _feed(g, pts)[-1] is False and g.held
    _feed(g, [(206.0 + i, 30.0, False) for i in range(3)])
    assert not g.held


def test_no_band_means_no_gate() -> None:
    # rule: with no expected value (no band yet) the gate passes `outside` through and remembers nothing
    g = _gate(count=1)
    assert g.step(0.0, 100.0, float("nan"), True) is True
    assert g.step(1.0, 100.0, float("nan"), False) is False
    assert not g.held and g.familiar(True, 2.0) is None


def test_state_round_trip_continues_identically() -> None:
    # rule: a gate rebuilt from to_state() decides every later point as the original does
    rng = np.random.default_rng(3)
    pts = [(float(i), float(rng.choice([30.0, 90.0, 100.0, 110.0])), bool(rng.random() < 0.3))
           for i in range(2000)]
    a = _gate()
    _feed(a, pts[:1000])
    b = RecurrenceGate.from_state(a.to_state())
    assert _feed(a, pts[1000:]) == _feed(b, pts[1000:])
    assert a.to_state() == b.to_state()


def test_a_restored_excursion_keeps_its_side() -> None:
    # rule: the side of an excursion is that of its largest deviation so far, also across a
    # restart: a smaller deviation on the other side afterwards does not switch it
    g = _gate(gap=5)
    for t, peak in ((0.0, 100.0), (100.0, 100.0), (200.0, 10.0), (300.0, 10.0)):
        _feed(g, _burst(t, peak, gap_after=6))
    assert _feed(g, [(400.0, 90.0, True), (401.0, 5.0, True)]) == [False, False]  # side: above
    restored = RecurrenceGate.from_state(g.to_state())
    for gate in (g, restored):  # below by 10 only: the side stays above, 90 < 100, held
        assert gate.step(402.0, 20.0, 30.0, True) is False


@pytest.mark.parametrize("state", [{}, {"count": 2}, {"count": "x", "horizon": 1, "gap": 1,
                                                       "debounce": 1, "kept": 4}])
def test_malformed_state_is_a_value_error(state: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RecurrenceGate.from_state(state)


@pytest.mark.parametrize("args", [(-1, 1.0, 0, 1), (2, 0.0, 0, 1), (2, 1.0, -1, 1), (2, 1.0, 0, 0)])
def test_bad_settings_are_refused(args: tuple[int, float, int, int]) -> None:
    with pytest.raises(ValueError):
        RecurrenceGate(*args)


def test_memory_is_bounded() -> None:
    g = RecurrenceGate(2, 1e9, 0, 1, kept=8)
    for i in range(100):
        g.step(2.0 * i, 100.0 + i, 30.0, True)
        g.step(2.0 * i + 1, 30.0, 30.0, False)
    assert len(g.to_state()["past"]) == 8


def test_config_builds_the_gate_and_zero_turns_it_off() -> None:
    cfg = BaselineSettings()
    gate = recurrence_gate(cfg)
    assert gate is not None
    assert (gate.count, gate.horizon, gate.gap, gate.debounce) == (
        cfg.recurrence, cfg.recurrence_horizon, cfg.merge_gap, cfg.debounce)
    assert recurrence_gate(cfg, 0) is None
    assert recurrence_gate(dataclasses.replace(cfg, recurrence=0)) is None


def test_alert_windows_start_at_the_first_released_sample() -> None:
    # rule: a window starts at its first released sample; a window with none is no alert
    flags = np.array([1, 1, 1, 1, 0, 0, 0, 1, 1, 1], dtype=bool)
    released = np.array([0, 0, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    got = alert_windows(flags, np.arange(10.0), debounce=3, merge_gap=0, released=released)
    assert [(w.start, w.end) for w in got] == [(2, 3)]


def _bursty_series(peaks: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """A flat CPU at 30 % with noise, bursting to each peak for 30 minutes, every 2.6 days.

    (Short and sparse enough that the bursts stay under 1 % of the residuals the band's
    tail quantile sees, so without the gate every burst alerts.)
    """
    rng = np.random.default_rng(5)
    step = 300.0
    n = int((2 + 2.6 * len(peaks) + 1) * DAY / step)
    times = np.arange(n) * step
    values = 30.0 + rng.normal(0.0, 1.0, n)
    for k, peak in enumerate(peaks):
        start = int((2.5 + 2.6 * k) * DAY / step)
        values[start : start + 6] = peak
    return times, values


def test_recurring_bursts_alert_twice_then_only_when_higher() -> None:
    # rule, end to end with the seasonal baseline: bursts to the same height at no fixed
    # hour alert the first `count` times; the later ones are held; a higher one alerts
    times, values = _bursty_series([100.0] * 5 + [140.0])
    cfg = BaselineSettings(seasonal=SeasonalSettings(min_history=DAY))

    def starts(gate: RecurrenceGate | None) -> list[int]:
        s = score_series(times, values, SeasonalBaseline(cfg.seasonal), "both", gate)
        ws = alert_windows(s.anomalous, values, s.expected, debounce=cfg.debounce,
                           merge_gap=cfg.merge_gap, released=s.released)
        return [w.start for w in ws]

    without = starts(None)
    with_gate = starts(recurrence_gate(cfg))
    assert len(without) == 6
    assert with_gate == [without[0], without[1], without[5]]


def test_module_examples() -> None:
    assert doctest.testmod(_recurrence).failed == 0
