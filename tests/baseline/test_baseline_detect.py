"""Alert windows: debounce (``for``), merge gap (``keep_firing_for``), peak."""

from __future__ import annotations

import numpy as np
import pytest

from inferwatch.baseline import Band, alert_windows, is_anomalous, runs


def _flags(text: str) -> np.ndarray:
    return np.array([c == "x" for c in text], dtype=bool)


@pytest.mark.parametrize(("pattern", "debounce", "gap", "want"), [
    ("..xxx..", 3, 0, [(2, 4)]),          # a run of exactly `debounce` fires
    ("..xx...", 3, 0, []),                # a shorter run is debounced away
    ("xxx.x..", 3, 1, [(0, 4)]),          # once firing, a short run within the gap extends it
    ("xxx..x.", 3, 1, [(0, 2)]),          # ... but not beyond the gap
    ("x.x.x.x", 2, 5, []),                # never firing: gaps do not join short runs
    ("xxx....xxx", 3, 3, [(0, 2), (7, 9)]),  # a long quiet spell ends the alert
    ("", 1, 0, []),                       # empty input
])
def test_alert_windows_rule(pattern: str, debounce: int, gap: int, want: list[tuple[int, int]]) -> None:
    f = _flags(pattern)
    got = alert_windows(f, np.zeros(f.size), debounce=debounce, merge_gap=gap)
    assert [(w.start, w.end) for w in got] == want


def test_peak_is_the_value_farthest_from_expected() -> None:
    # rule: peak is the most extreme anomalous value, low or high
    values = np.array([10.0, 30.0, -40.0, 20.0])
    expected = np.zeros(4)
    (w,) = alert_windows(np.ones(4, dtype=bool), values, expected, debounce=1)
    assert w.peak == -40.0


def test_runs_are_maximal_and_inclusive() -> None:
    assert runs(_flags("xx.x..xxx")) == [(0, 1), (3, 3), (6, 8)]


@pytest.mark.parametrize(("direction", "value", "want"), [
    ("above", 13.0, True), ("above", 7.0, False),   # only the watched side counts
    ("below", 7.0, True), ("below", 13.0, False),
    ("both", 13.0, True), ("both", 7.0, True), ("both", 10.0, False),
    ("both", float("nan"), False),                   # NaN is never anomalous
])
def test_is_anomalous_direction(direction: str, value: float, want: bool) -> None:
    assert is_anomalous(Band(10.0, 8.0, 12.0), value, direction) is want  # type: ignore[arg-type]


def test_no_band_is_never_anomalous() -> None:
    assert not is_anomalous(None, 1e9)
