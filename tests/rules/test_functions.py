"""rate/increase and histogram_quantile against cases from Prometheus 2.42's promql/testdata."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.rules._helpers import load

from inferwatch.rules import QueryEngine, bucket_quantile, parse_promql

M = 60.0


def _eval(store: object, expr: str, t: float) -> dict[str, float]:
    out = QueryEngine(store).instant(parse_promql(expr), t)  # type: ignore[arg-type]
    assert isinstance(out, list)
    return {str(labels): v for labels, v in out}


RATE_SERIES = {
    'http_requests{path="/foo"}': "0+10x10",
    'http_requests{path="/bar"}': "0+10x5 0+10x5",
    'reset{path="/foo"}': "0 1 2 3 2 3 4",
    "testcounter_reset_middle": "0+10x4 0+10x5",
    "testcounter_reset_end": "0+10x9 0 10",
    "calculate_rate_window": "0+80x10",
}


@pytest.mark.parametrize(("expr", "t", "want"), [
    # increase over the whole range; the counter reset in /bar adds its pre-reset value
    ("increase(http_requests[50m])", 50 * M, {'{path="/foo"}': 100, '{path="/bar"}': 90}),
    # a window longer than the data: first sample at the zero point, no extrapolation below 0
    ("increase(http_requests[100m])", 50 * M, {'{path="/foo"}': 100, '{path="/bar"}': 90}),
    # 3 2 is a reset: read as 3 0 1 2
    ("increase(reset[30m])", 30 * M, {'{path="/foo"}': 7}),
    # reset in the middle of the range
    ("rate(testcounter_reset_middle[50m])", 50 * M, {"{}": 0.03}),
    # a reset at the end of the range: the window holds 90 then 0, which is a reset to 0
    ("rate(testcounter_reset_end[5m])", 50 * M, {"{}": 0.0}),
    # per-second rate
    ("rate(calculate_rate_window[50m])", 50 * M, {"{}": 0.26666666666666666}),
])
def test_rate_and_increase_match_prometheus(expr: str, t: float, want: dict[str, float]) -> None:
    store = load(RATE_SERIES, 5 * M)
    got = _eval(store, expr, t)
    assert got == pytest.approx(want, rel=1e-12)


ZERO_CUTOFF = {f'testcounter_zero_cutoff{{start="{k}m"}}': f"{60 * k}+240x10" for k in range(6)}


@pytest.mark.parametrize(("t", "want"), [
    # zero cutoff: left-side extrapolation stops where the counter would reach 0
    (10 * M, [0.5, 0.55, 0.6, 0.65, 0.7, 0.6]),
    # normal half-interval extrapolation when the window starts after the data
    (50 * M, [0.6] * 6),
])
def test_rate_zero_cutoff(t: float, want: list[float]) -> None:
    store = load(ZERO_CUTOFF, 4 * M)
    got = _eval(store, "rate(testcounter_zero_cutoff[20m])", t)
    assert [got[f'{{start="{k}m"}}'] for k in range(6)] == pytest.approx(want, rel=1e-12)


HISTOGRAMS = {
    'testhistogram_bucket{le="0.1", start="positive"}': "0+5x10",
    'testhistogram_bucket{le=".2", start="positive"}': "0+7x10",
    'testhistogram_bucket{le="1e0", start="positive"}': "0+11x10",
    'testhistogram_bucket{le="+Inf", start="positive"}': "0+12x10",
    'testhistogram_bucket{le="-.2", start="negative"}': "0+1x10",
    'testhistogram_bucket{le="-0.1", start="negative"}': "0+2x10",
    'testhistogram_bucket{le="0.3", start="negative"}': "0+2x10",
    'testhistogram_bucket{le="+Inf", start="negative"}': "0+3x10",
    'testhistogram2_bucket{le="0"}': "0+0x10",
    'testhistogram2_bucket{le="2"}': "0+1x10",
    'testhistogram2_bucket{le="4"}': "0+2x10",
    'testhistogram2_bucket{le="6"}': "0+3x10",
    'testhistogram2_bucket{le="+Inf"}': "0+3x10",
}
POS, NEG = '{start="positive"}', '{start="negative"}'


@pytest.mark.parametrize(("expr", "t", "want"), [
    # q < 0 is -Inf, q > 1 is +Inf
    ("histogram_quantile(-0.1, testhistogram_bucket)", 50 * M, {POS: -math.inf, NEG: -math.inf}),
    ("histogram_quantile(1.01, testhistogram_bucket)", 50 * M, {POS: math.inf, NEG: math.inf}),
    # lowest bucket: starts at 0 when positive, answers its bound when <= 0
    ("histogram_quantile(0, testhistogram_bucket)", 50 * M, {POS: 0.0, NEG: -0.2}),
    # the +Inf bucket answers the highest finite bound
    ("histogram_quantile(1, testhistogram_bucket)", 50 * M, {POS: 1.0, NEG: 0.3}),
    # linear interpolation inside the bucket
    ("histogram_quantile(0.2, testhistogram_bucket)", 50 * M, {POS: 0.048, NEG: -0.2}),
    ("histogram_quantile(0.5, testhistogram_bucket)", 50 * M, {POS: 0.15, NEG: -0.15}),
    ("histogram_quantile(0.8, testhistogram_bucket)", 50 * M, {POS: 0.72, NEG: 0.3}),
    # over rates, the same quantiles
    ("histogram_quantile(0.8, rate(testhistogram_bucket[5m]))", 50 * M, {POS: 0.72, NEG: 0.3}),
    # results exactly in the middle of a bucket
    ("histogram_quantile(0.5, testhistogram2_bucket)", 7 * M, {"{}": 3.0}),
    ("histogram_quantile(0.8333333333333334, testhistogram2_bucket)", 7 * M, {"{}": 5.0}),
])
def test_histogram_quantile_matches_prometheus(expr: str, t: float, want: dict[str, float]) -> None:
    got = _eval(load(HISTOGRAMS, 5 * M), expr, t)
    assert got == pytest.approx(want, rel=1e-12)


def test_quantile_nan_and_missing_inf_bucket() -> None:
    # NaN quantile -> NaN; no +Inf bucket -> NaN; zero observations -> NaN
    assert math.isnan(bucket_quantile(math.nan, [(1.0, 1.0), (math.inf, 2.0)]))
    assert math.isnan(bucket_quantile(0.5, [(1.0, 1.0), (2.0, 2.0)]))
    assert math.isnan(bucket_quantile(0.5, [(1.0, 0.0), (math.inf, 0.0)]))


def test_quantile_coalesces_equal_bounds_and_forces_monotonic_counts() -> None:
    # le="0.2" and le="2e-1" are one bucket; a decreasing count is raised to the max so far
    assert bucket_quantile(0.5, [(0.1, 1), (0.2, 1), (0.2, 1), (math.inf, 4)]) == pytest.approx(0.2)
    assert bucket_quantile(0.5, [(1.0, 4), (2.0, 2), (math.inf, 8)]) == bucket_quantile(
        0.5, [(1.0, 4), (2.0, 4), (math.inf, 8)])


@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=8), st.floats(0, 1))
def test_quantile_lies_within_the_finite_bounds(counts: list[float], q: float) -> None:
    # property: with bounds 1..n and +Inf, any quantile lies in [0, n]
    cum = [sum(counts[: i + 1]) for i in range(len(counts))]
    buckets = [(float(i + 1), c) for i, c in enumerate(cum)] + [(math.inf, cum[-1])]
    r = bucket_quantile(q, buckets)
    assert math.isnan(r) or 0.0 <= r <= len(counts)


def test_instant_lookback_and_staleness() -> None:
    # the latest sample within [t-5m, t] is seen; a staleness marker hides the series at once
    store = load({'g{a="1"}': "1 _x10", 'g{a="2"}': "2 stale"}, M)
    assert _eval(store, "g", 5 * M) == {'g{a="1"}': 1.0}
    assert _eval(store, "g", 5 * M + 1) == {}
    assert _eval(store, "g", 0.0) == {'g{a="1"}': 1.0, 'g{a="2"}': 2.0}
    assert _eval(store, "g", 1 * M) == {'g{a="1"}': 1.0}
