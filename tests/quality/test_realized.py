"""Issue 36 #1: realized performance from delayed labels, joined by request id, exact against scikit-learn."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from inferwatch.model import SimulatedClock
from inferwatch.quality import RealizedPerformance
from inferwatch.sdk import Monitor

LABELS = {"service": "svc", "model": "m"}


def test_delayed_labels_through_monitor_on_the_simulated_clock() -> None:
    rng = np.random.default_rng(0)
    p = np.round(rng.uniform(size=300), 3)
    y = (rng.random(300) < p).astype(int)
    clock = SimulatedClock(0.0)
    agg = RealizedPerformance(service="svc", model="m", window=200)
    with Monitor("svc", "m", clock=clock, aggregators=[agg]) as mon:
        for i in range(300):
            mon.observe_prediction({"x": 1.0}, confidence=float(p[i]), request_id=f"r{i}")
        assert mon.flush(60.0)
        # Before any label: nothing realized, every prediction waits.
        assert mon.get_sample_value("inferwatch_model_realized", {**LABELS, "metric": "accuracy"}) is None
        assert mon.get_sample_value("inferwatch_model_unlabelled_ratio", LABELS) == 1.0
        clock.advance(6 * 3600.0)  # labels arrive hours later, in another order
        for i in reversed(range(50, 300)):
            mon.observe_label(f"r{i}", int(y[i]))
        mon.observe_label("never-predicted", 1)
        assert mon.flush(60.0)
        window = slice(50, 250)  # the window holds the last 200 joined: labels of r249 .. r50
        pred = (p[window] >= 0.5).astype(int)
        for metric, want in (
            ("accuracy", skm.accuracy_score(y[window], pred)),
            ("precision", skm.precision_score(y[window], pred)),
            ("recall", skm.recall_score(y[window], pred)),
            ("f1", skm.f1_score(y[window], pred)),
            ("roc_auc", skm.roc_auc_score(y[window], p[window])),
            ("log_loss", skm.log_loss(y[window], p[window])),
        ):
            got = mon.get_sample_value("inferwatch_model_realized", {**LABELS, "metric": metric})
            assert got == pytest.approx(want, abs=1e-12), metric
        assert mon.get_sample_value("inferwatch_model_labelled_window_samples", LABELS) == 200
        assert mon.get_sample_value("inferwatch_model_unlabelled_ratio", LABELS) == pytest.approx(50 / 250)
        assert mon.get_sample_value("inferwatch_model_labels_total", {**LABELS, "outcome": "joined"}) == 250
        assert mon.get_sample_value("inferwatch_model_labels_total", {**LABELS, "outcome": "unmatched"}) == 1


def test_predictions_expire_and_the_store_is_bounded() -> None:
    agg = RealizedPerformance(service="s", model="m", max_pending=3, max_age=100.0)
    agg.consume("prediction_id", [(f"r{i}", 0.9, None) for i in range(5)], 0.0)
    assert agg.pending == 3 and agg.counts["expired"] == 2  # the two oldest evicted
    agg.consume("prediction_id", [("late", 0.1, None)], 150.0)  # the first three are now older than 100 s
    assert agg.pending == 1 and agg.counts["expired"] == 5
    agg.consume("label", [("r4", 1)], 151.0)
    assert agg.counts["unmatched"] == 1


def test_multiclass_and_bad_payloads() -> None:
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(400, 3)) * 2
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (rng.random((400, 1)) > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
    agg = RealizedPerformance(service="s", model="m", window=400)
    agg.consume("prediction_id", [(i, None, p[i].tolist()) for i in range(400)] + [("bad", None, [1.0])], 0.0)
    agg.consume("label", [(i, int(y[i])) for i in range(400)] + [("x", "not a class")], 1.0)
    got = agg.metrics()
    pred = p.argmax(axis=1)
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred))
    assert got["f1"] == pytest.approx(skm.f1_score(y, pred, average="macro"))
    assert got["roc_auc"] == pytest.approx(skm.roc_auc_score(y, p, multi_class="ovr"))
    assert agg.counts["invalid"] == 2


def test_empty_window_is_nan_and_settings_fail_fast() -> None:
    assert all(math.isnan(v) for v in RealizedPerformance(service="s").metrics().values())
    with pytest.raises(ValueError, match="positive"):
        RealizedPerformance(service="s", window=0)


def test_estimated_performance_drops_before_the_labels_arrive() -> None:
    # The story of issue 36: the model gets worse (scores less sure); the estimate drops in the
    # first window after the change, hours before any label could show it.
    from inferwatch.quality import CBPE, EstimatedPerformance

    rng = np.random.default_rng(2)
    p_ref = rng.beta(0.5, 0.5, size=5000)
    y_ref = (rng.random(5000) < p_ref).astype(float)
    fitted = CBPE().fit(y_ref, (p_ref >= 0.5).astype(float), p_ref)
    clock = SimulatedClock(0.0)
    agg = EstimatedPerformance(fitted, service="svc", model="m", window=3600.0)
    with Monitor("svc", "m", clock=clock, aggregators=[agg]) as mon:
        for v in rng.beta(0.5, 0.5, size=1000):  # hour 0: like the reference
            mon.observe_prediction({}, confidence=float(v))
        assert mon.flush(60.0)
        clock.advance(3600.0)
        key = {**LABELS, "metric": "accuracy"}
        before = mon.get_sample_value("inferwatch_model_estimated", {**key, "bound": "estimate"})
        for v in rng.beta(3, 3, size=1000):  # hour 1: scores near 0.5, the model is unsure
            mon.observe_prediction({}, confidence=float(v))
        mon.observe_prediction({}, confidence=7.0)  # unreadable: counted, dropped
        assert mon.flush(60.0)
        clock.advance(3600.0)
        after = mon.get_sample_value("inferwatch_model_estimated", {**key, "bound": "estimate"})
        upper = mon.get_sample_value("inferwatch_model_estimated", {**key, "bound": "upper"})
        assert before is not None and after is not None and upper is not None
        assert before > 0.8 and after < 0.7 and upper < before, (before, after, upper)
        assert agg.invalid == 1
        assert mon.get_sample_value("inferwatch_model_estimate_outside_support_ratio", LABELS) is not None
        # What the default EstimatedPerformanceDrop rule reads: the window's rows and the reference's level.
        assert mon.get_sample_value("inferwatch_model_estimated_window_samples", LABELS) == 1000.0
        ref = mon.get_sample_value("inferwatch_model_reference_performance", key)
        assert ref == pytest.approx(float(np.mean(y_ref == (p_ref >= 0.5))))
        assert upper < ref


def test_a_label_that_is_not_a_whole_class_index_is_invalid_and_leaves_its_prediction_waiting() -> None:
    # 0.7 was truncated to class 0 and joined; inf raised OverflowError out of consume (the batch lost)
    agg = RealizedPerformance(service="svc", model="m")
    agg.consume("prediction_id", [(f"r{i}", 0.9, None) for i in range(6)], 0.0)
    agg.consume("label", [("r0", 0.7), ("r1", math.inf), ("r2", math.nan), ("r3", np.float32(0.5))], 1.0)
    assert agg.counts["invalid"] == 4 and agg.counts["joined"] == 0 and agg.pending == 6
    agg.consume("label", [("r0", 1.0), ("r1", True), ("r2", np.int64(1)), ("r3", "1")], 2.0)
    assert agg.counts["joined"] == 4 and agg.metrics()["accuracy"] == 1.0
