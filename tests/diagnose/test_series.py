"""Segment statistics: properties of counter increase and gauge means."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from inferwatch.diagnose._series import Segment, counter_increase, counter_rate, gauge_mean
from inferwatch.model import STALE_NAN, Labels
from inferwatch.store import Series

ALL = Segment(0.0, 1e6)
steps = st.lists(st.floats(0, 1e6, allow_nan=False), min_size=2, max_size=50)


def _series(v: list[float]) -> Series:
    return Series(Labels.of("c_total"), np.arange(len(v), dtype=np.float64) * 15.0, np.array(v))


@given(steps)
def test_monotonic_counter_increase_is_last_minus_first(incs: list[float]) -> None:
    values = np.cumsum(incs).tolist()
    inc = counter_increase([_series(values)], ALL)
    assert inc is not None
    assert np.isclose(inc[0], values[-1] - values[0], rtol=1e-9, atol=1e-6)
    assert inc[1] == 15.0 * (len(values) - 1)


@given(steps, st.integers(1, 49))
def test_a_reset_never_makes_the_increase_negative(incs: list[float], at: int) -> None:
    values = np.cumsum(incs)
    at = min(at, len(values) - 1)
    values[at:] -= values[at - 1]  # the counter restarted from zero after sample at-1
    inc = counter_increase([_series(values.tolist())], ALL)
    assert inc is not None and inc[0] >= 0


def test_rate_needs_three_points_and_skips_stale_markers() -> None:
    # rule: fewer than MIN_POINTS samples is "not enough data"
    assert counter_rate([_series([0.0, 10.0])], ALL) is None
    assert counter_rate([_series([0.0, 15.0, 30.0])], ALL) == 1.0
    # rule: staleness markers are not values
    assert gauge_mean([_series([1.0, STALE_NAN, 3.0, 5.0])], ALL) == 3.0
