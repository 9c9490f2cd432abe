from __future__ import annotations

import math
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferwatch.model import (
    STALE_NAN,
    SimulatedClock,
    format_duration,
    is_stale_nan,
    parse_duration,
)


def test_simulated_clock_moves_only_when_told() -> None:
    c = SimulatedClock(100.0)
    assert c.now() == 100.0
    c.advance(15)
    c.sleep(5)
    assert c.now() == c.monotonic() == 120.0
    with pytest.raises(ValueError, match="backwards"):
        c.set(10)


def test_simulated_wait_returns_at_once() -> None:
    c, ev = SimulatedClock(0), threading.Event()
    assert c.wait(ev, 30) is False and c.now() == 30
    ev.set()
    assert c.wait(ev, 30) is True and c.now() == 30


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("15s", 15), ("5m", 300), ("1h30m", 5400), ("250ms", 0.25), ("1w", 604800), ("0s", 0),
     ("1d2h", 93600)],
)
def test_parse_duration(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5", "m5", "5x", "1m1h", "-5m", "5 m"])
def test_bad_durations_name_the_text(text: str) -> None:
    with pytest.raises(ValueError):
        parse_duration(text)


@given(st.integers(min_value=0, max_value=10**10))
def test_format_parse_round_trip(ms: int) -> None:
    assert parse_duration(format_duration(ms / 1000)) == pytest.approx(ms / 1000)


def test_stale_marker_is_a_specific_nan() -> None:
    assert math.isnan(STALE_NAN) and is_stale_nan(STALE_NAN)
    assert not is_stale_nan(float("nan")) and not is_stale_nan(1.0)
