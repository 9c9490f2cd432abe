"""Data quality through the SDK: missing, out-of-range and unseen shares per feature (simulated clock)."""

from __future__ import annotations

import numpy as np
import pytest

from inferwatch.model import SimulatedClock
from inferwatch.quality import DataQualityAggregator, build_profile
from inferwatch.sdk import Monitor

LABELS = {"service": "svc", "model": "m"}


def test_shares_match_a_direct_count_and_small_windows_publish_nothing() -> None:
    rng = np.random.default_rng(4)
    ref = {"x": rng.normal(size=2000), "c": rng.choice(np.array(["a", "b", "c"], dtype=object), size=2000)}
    profile = build_profile(ref)
    clock = SimulatedClock(0.0)
    agg = DataQualityAggregator(profile, service="svc", model="m", window=60.0, min_samples=100)
    x = rng.normal(loc=2.0, size=500)  # shifted: many values beyond the reference's maximum
    c = rng.choice(np.array(["a", "b", "zz"], dtype=object), size=500)
    miss = rng.random(500) < 0.1
    rows = [{"x": None if m else float(v), "c": str(k)} for v, k, m in zip(x, c, miss, strict=True)]
    with Monitor("svc", "m", clock=clock, aggregators=[agg]) as mon:
        for row in rows:
            mon.observe_prediction(row)
        mon.observe_prediction({"x": "oops", "c": "a"})  # a type error: the payload is dropped, counted
        assert mon.flush(60.0)
        assert mon.get_sample_value("inferwatch_feature_data_quality_ratio",
                                    {**LABELS, "feature": "x", "check": "missing"}) is None  # still open
        clock.advance(60.0)
        get = mon.get_sample_value
        ratio = "inferwatch_feature_data_quality_ratio"
        assert get(ratio, {**LABELS, "feature": "x", "check": "missing"}) == pytest.approx(miss.mean())
        beyond = (~miss) & ((x < ref["x"].min()) | (x > ref["x"].max()))
        assert get(ratio, {**LABELS, "feature": "x", "check": "out_of_range"}) == pytest.approx(beyond.mean())
        assert beyond.mean() > 0.01
        assert get(ratio, {**LABELS, "feature": "c", "check": "unseen"}) == pytest.approx((c == "zz").mean())
        assert get("inferwatch_data_quality_window_samples", LABELS) == 501.0  # readable or not
        assert agg.invalid == 1
        # the dropped payload's fault is x's: a type error, over all 501 rows the window saw
        assert get(ratio, {**LABELS, "feature": "x", "check": "type_error"}) == pytest.approx(1 / 501)
        # a window of 50 rows (< min_samples) closes: the last published shares stay, not noise
        for row in rows[:50]:
            mon.observe_prediction(row)
        assert mon.flush(60.0)
        clock.advance(60.0)
        assert get("inferwatch_data_quality_window_samples", LABELS) == 501.0


def test_type_errors_name_the_feature_at_fault_in_rows_columns_and_arrays() -> None:
    profile = build_profile({"x": np.arange(100.0), "y": np.arange(100.0)})
    agg = DataQualityAggregator(profile, service="svc", model="m", window=60.0, min_samples=2)
    good = [({"x": 1.0, "y": 2.0}, None, None)] * 6
    bad = [
        ({"x": "abc", "y": 2.0}, None, None),                 # a row: x is a string
        ({"x": [1.0, 2.0], "y": [True, "z"]}, None, None),     # columns: both of y's values are wrong
        (["1.5", object()], None, None),                       # an array row: "1.5" reads, y does not
    ]
    agg.consume("prediction", good + bad, 1.0)
    agg.consume("prediction", [], 61.0)
    assert agg.invalid == 3 and agg.last_rows == 10  # 6 readable rows and 4 dropped ones
    last = agg.last
    assert last is not None
    # 6 readable rows + 3 dropped payloads of 1, 2 and 1 rows = 10 rows seen
    assert last["x"]["type_error"] == pytest.approx(1 / 10)
    assert last["y"]["type_error"] == pytest.approx(3 / 10)
    assert last["x"]["missing"] == 0.0


def test_a_dropped_batch_counts_its_rows_so_a_share_never_passes_one() -> None:
    profile = build_profile({"x": np.arange(100.0), "y": np.arange(100.0)})
    agg = DataQualityAggregator(profile, service="svc", model="m", window=60.0, min_samples=2)
    good = [({"x": 1.0, "y": 2.0}, None, None)] * 10
    batch = ({"x": [1.0] * 30, "y": ["text"] * 30}, None, None)  # one payload, 30 rows, y unreadable
    agg.consume("prediction", [*good, batch], 1.0)
    agg.consume("prediction", [], 61.0)
    assert agg.last is not None
    assert agg.last["y"]["type_error"] == pytest.approx(30 / 40)
    assert agg.last["x"]["type_error"] == 0.0


def test_a_feature_sent_as_text_in_every_payload_publishes_its_type_errors() -> None:
    # A schema change upstream: no row is readable, so no row has a missing or out-of-range value
    # to count, but the window saw 120 rows and every one of them is x's type error.
    profile = build_profile({"x": np.arange(100.0), "c": np.array(["a", "b"] * 50, dtype=object)})
    agg = DataQualityAggregator(profile, service="svc", model="m", window=60.0, min_samples=100)
    agg.consume("prediction", [({"x": str(i), "c": "a"}, None, None) for i in range(120)], 1.0)
    agg.consume("prediction", [], 61.0)
    assert agg.invalid == 120 and agg.last_rows == 120
    assert agg.last == {"x": {"type_error": 1.0}}
