"""Streaming aggregators driven through consume/collect on explicit times, and through Monitor."""

from __future__ import annotations

import numpy as np
import pytest
from prometheus_client import CollectorRegistry

from inferwatch import InputError
from inferwatch.model import SimulatedClock
from inferwatch.quality import (
    MIN_WINDOW_SAMPLES,
    ConfidenceAggregator,
    DriftAggregator,
    build_profile,
    psi,
    psi_from_counts,
)


class _Collector:
    def __init__(self, agg: object, now: float) -> None:
        self.agg, self.now = agg, now

    def collect(self) -> object:
        return self.agg.collect(self.now)  # type: ignore[attr-defined]


def _value(agg: object, now: float, name: str, labels: dict[str, str]) -> float | None:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Collector(agg, now))  # type: ignore[arg-type]
    return reg.get_sample_value(name, labels)


def _profile(rng: np.random.Generator):  # type: ignore[no-untyped-def]
    return build_profile({"x": rng.normal(size=5000), "c": np.array(["a", "b"] * 2500, dtype=object)})


def test_window_psi_equals_batch_psi_and_is_exported() -> None:
    rng = np.random.default_rng(1)
    profile_values = rng.normal(size=5000)
    profile = build_profile({"x": profile_values, "c": np.array(["a", "b"] * 2500, dtype=object)})
    agg = DriftAggregator(profile, service="svc", model="m", window=60.0)
    cur = rng.normal(0.5, size=2000)
    # numpy batch, mapping of columns, single-row mappings: all accepted
    agg.consume("prediction", [({"x": cur[:1000], "c": ["a"] * 1000}, None, None)], now=1.0)
    agg.consume("prediction", [({"x": v, "c": "b"}, 0.9, None) for v in cur[1000:]], now=30.0)
    labels = {"service": "svc", "model": "m", "feature": "x"}
    assert _value(agg, 59.0, "inferwatch_feature_psi", labels) is None  # window still open
    got = _value(agg, 61.0, "inferwatch_feature_psi", labels)
    # rule: the streaming PSI over a window equals the batch PSI on the same bins
    assert got == pytest.approx(psi(profile_values, cur, cuts=profile.feature("x").cuts))
    assert _value(agg, 61.0, "inferwatch_drift_window_samples", {"service": "svc", "model": "m"}) == 2000


def test_anomalous_ratio_counts_rows_outside_support_and_unseen() -> None:
    rng = np.random.default_rng(2)
    agg = DriftAggregator(_profile(rng), service="s", window=10.0)
    rows = np.array([[0.0, "a"], [100.0, "a"], [0.0, "zz"], [np.nan, "b"]], dtype=object)
    agg.consume("prediction", [(rows, None, None)], now=0.0)
    agg.consume("prediction", [], now=10.0)
    assert agg.last is not None and agg.last.anomalous_ratio == 0.5


def test_bad_payloads_are_counted_never_raised() -> None:
    agg = DriftAggregator(_profile(np.random.default_rng(3)), service="s", window=10.0)
    agg.consume("prediction", [({"x": "oops", "c": "a"}, None, None), (np.zeros((2, 5)), None, None),
                               ({"x": 1.0, "c": "a"}, None, None)], now=0.0)
    assert agg.invalid == 2
    assert _value(agg, 0.0, "inferwatch_quality_invalid_observations_total",
                  {"service": "s", "model": ""}) == 2


def test_empty_window_exposes_no_psi() -> None:
    agg = DriftAggregator(_profile(np.random.default_rng(4)), service="s", window=10.0)
    agg.consume("prediction", [({"x": 0.0, "c": "a"}, None, None)], now=0.0)
    agg.consume("prediction", [], now=25.0)  # [10, 20) was empty; [0, 10) closed at the first roll
    assert _value(agg, 35.0, "inferwatch_feature_psi", {"service": "s", "model": "", "feature": "x"}) is None
    assert _value(agg, 35.0, "inferwatch_drift_window_samples", {"service": "s", "model": ""}) == 0


def test_small_window_publishes_its_size_but_no_psi() -> None:
    # the evidence rule: a 14-row window of undrifted data once read PSI 1.87 and asked for a rollback
    rng = np.random.default_rng(7)
    agg = DriftAggregator(_profile(rng), service="s", window=10.0, min_samples=100)
    agg.consume("prediction", [({"x": rng.normal(size=99), "c": ["a"] * 99}, None, None)], now=0.0)
    lab = {"service": "s", "model": ""}
    assert _value(agg, 10.0, "inferwatch_drift_window_samples", lab) == 99
    assert _value(agg, 10.0, "inferwatch_feature_psi", {**lab, "feature": "x"}) is None
    assert _value(agg, 10.0, "inferwatch_feature_psi_critical", {**lab, "feature": "x"}) is None
    assert _value(agg, 10.0, "inferwatch_anomalous_samples_ratio", lab) is None
    agg.consume("prediction", [({"x": rng.normal(size=100), "c": ["a"] * 100}, None, None)], now=10.0)
    assert _value(agg, 20.0, "inferwatch_feature_psi", {**lab, "feature": "x"}) is not None


def test_default_minimum_keeps_noise_well_under_the_warning_threshold() -> None:
    # rule: at the default window size, PSI from sampling noise alone (10 equal bins, 10,000 reference
    # rows) stays under a third of the 0.1 warning threshold in 99.9 % of windows
    rng = np.random.default_rng(8)
    ref = np.full(10, 1000)
    noise = [psi_from_counts(ref, rng.multinomial(MIN_WINDOW_SAMPLES, [0.1] * 10)) for _ in range(4000)]
    assert np.quantile(noise, 0.999) < 0.1 / 3
    with pytest.raises(InputError, match="min_samples"):
        DriftAggregator(_profile(rng), service="s", min_samples=0)


def test_memory_is_bounded_by_bins() -> None:
    agg = DriftAggregator(_profile(np.random.default_rng(5)), service="s", window=10.0)
    before = agg.window_bytes
    agg.consume("prediction", [(np.c_[np.arange(10000.0), np.full(10000, "a", object)], None, None)], 1.0)
    assert agg.window_bytes == before == (10 + 3 + 2) * 8  # 10 bins, 2 categories + unseen, 2 missing


def test_confidence_metrics() -> None:
    ref = build_profile({"confidence": np.linspace(0, 1, 1000)}).features[0]
    agg = ConfidenceAggregator(service="s", window=10.0, reference=ref)  # type: ignore[arg-type]
    agg.consume("prediction", [(None, [0.2, 0.4, 0.9], None), (None, None, [[0.25, 0.25, 0.5]]),
                               (None, 7.0, None)], now=0.0)
    assert agg.invalid == 1  # rule: confidence outside [0, 1] is dropped and counted
    lab = {"service": "s", "model": ""}
    assert _value(agg, 5.0, "inferwatch_prediction_confidence_count", lab) == 4
    assert _value(agg, 5.0, "inferwatch_prediction_confidence_bucket", {**lab, "le": "0.5"}) == 3
    assert _value(agg, 10.0, "inferwatch_low_confidence_ratio", lab) == 0.5
    assert _value(agg, 10.0, "inferwatch_prediction_entropy", lab) == pytest.approx(
        -(0.5 * np.log(0.25) + 0.5 * np.log(0.5)))
    assert _value(agg, 10.0, "inferwatch_confidence_psi", lab) is not None


def test_end_to_end_through_monitor() -> None:
    from inferwatch.sdk import Monitor

    rng = np.random.default_rng(6)
    clock = SimulatedClock(0.0)
    drift = DriftAggregator(_profile(rng), service="svc", model="m", window=60.0)
    conf = ConfidenceAggregator(service="svc", model="m", window=60.0)
    with Monitor("svc", "m", clock=clock, aggregators=[drift, conf]) as mon:
        for v in rng.normal(3.0, size=MIN_WINDOW_SAMPLES):
            mon.observe_prediction({"x": float(v), "c": "a"}, confidence=0.8)
        assert mon.flush(60.0)
        clock.advance(61.0)
        labels = {"service": "svc", "model": "m", "feature": "x"}
        assert (mon.get_sample_value("inferwatch_feature_psi", labels) or 0) > 0.5
        assert mon.get_sample_value("inferwatch_prediction_confidence_mean",
                                    {"service": "svc", "model": "m"}) == pytest.approx(0.8)
