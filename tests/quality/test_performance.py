"""Issue 36: realized metrics exact against scikit-learn; isotonic calibration; CBPE estimates and bands."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm
from sklearn.isotonic import IsotonicRegression

from inferwatch._exceptions import InputError
from inferwatch.quality import CBPE, Isotonic, fit_calibrator
from inferwatch.quality.performance._perf_metrics import (
    CLASSIFICATION_METRICS,
    binary_metrics,
    expected_calibration_error,
    multiclass_metrics,
    regression_metrics,
)


def _binary_data(rng: np.random.Generator, n: int, shift: float = 0.0) -> tuple[np.ndarray, ...]:
    p = np.clip(rng.beta(2, 2, size=n) + shift, 0, 1)
    y = (rng.random(n) < p).astype(np.float64)
    raw = p**1.5  # monotone but miscalibrated: the calibrator has work to do
    return y, (raw > 0.4).astype(np.float64), raw


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_binary_metrics_equal_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    y, pred, score = _binary_data(rng, 3000)
    score = np.round(score, 2)  # ties: ROC AUC counts them half, as scikit-learn does
    got = binary_metrics(y, pred, score, (*CLASSIFICATION_METRICS, "log_loss"))
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred), abs=1e-12)
    assert got["precision"] == pytest.approx(skm.precision_score(y, pred), abs=1e-12)
    assert got["recall"] == pytest.approx(skm.recall_score(y, pred), abs=1e-12)
    assert got["f1"] == pytest.approx(skm.f1_score(y, pred), abs=1e-12)
    assert got["roc_auc"] == pytest.approx(skm.roc_auc_score(y, score), abs=1e-12)
    assert got["log_loss"] == pytest.approx(skm.log_loss(y, score), abs=1e-9)


def test_multiclass_metrics_equal_scikit_learn_macro() -> None:
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(4000, 3))
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (rng.random((4000, 1)) > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
    pred = p.argmax(axis=1)
    got = multiclass_metrics(y, pred, p, CLASSIFICATION_METRICS)
    assert got["accuracy"] == pytest.approx(skm.accuracy_score(y, pred), abs=1e-12)
    for name, fn in (("precision", skm.precision_score), ("recall", skm.recall_score), ("f1", skm.f1_score)):
        assert got[name] == pytest.approx(fn(y, pred, average="macro"), abs=1e-12)
    assert got["roc_auc"] == pytest.approx(
        skm.roc_auc_score(y, p, multi_class="ovr", average="macro"), abs=1e-12
    )


def test_regression_metrics_equal_scikit_learn() -> None:
    rng = np.random.default_rng(4)
    y = rng.normal(100, 20, 500)
    pred = y + rng.normal(0, 5, 500)
    got = regression_metrics(y, pred)
    assert got["mae"] == pytest.approx(skm.mean_absolute_error(y, pred))
    assert got["rmse"] == pytest.approx(math.sqrt(skm.mean_squared_error(y, pred)))
    assert got["mape"] == pytest.approx(skm.mean_absolute_percentage_error(y, pred))


def test_undefined_metrics_are_nan_not_errors() -> None:
    # One class only: ROC AUC is undefined; no positive prediction: precision is undefined.
    y = np.zeros(10)
    got = binary_metrics(y, np.zeros(10), np.linspace(0, 1, 10), ("roc_auc", "precision", "accuracy"))
    assert math.isnan(got["roc_auc"]) and math.isnan(got["precision"]) and got["accuracy"] == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.booleans()), min_size=2, max_size=200))
def test_isotonic_equals_scikit_learn(rows: list[tuple[int, bool]]) -> None:
    x = np.array([r[0] / 30 for r in rows])
    y = np.array([float(r[1]) for r in rows])
    ours = Isotonic.fit(x, y)
    theirs = IsotonicRegression(out_of_bounds="clip").fit(x, y)
    grid = np.linspace(-0.1, 1.1, 61)
    np.testing.assert_allclose(ours(grid), theirs.predict(grid), atol=1e-12)


def test_calibrator_fixes_miscalibrated_scores_and_skips_one_class() -> None:
    rng = np.random.default_rng(5)
    p = rng.uniform(size=20000)
    y = (rng.random(20000) < p).astype(np.float64)
    assert type(fit_calibrator(p, np.zeros(20000))).__name__ == "Identity"
    cal = fit_calibrator(p**3, y)
    assert type(cal).__name__ == "Isotonic"
    assert expected_calibration_error(y, cal(p**3)) < expected_calibration_error(y, p**3) / 5


def test_cbpe_binary_estimates_track_realized_within_the_band() -> None:
    rng = np.random.default_rng(6)
    y, pred, raw = _binary_data(rng, 60000)
    fitted = CBPE().fit(y[:20000], pred[:20000], raw[:20000])
    inside, total = 0, 0
    for start in range(20000, 60000, 4000):
        sl = slice(start, start + 4000)
        est = fitted.score(pred[sl], raw[sl])
        real = binary_metrics(y[sl], pred[sl], raw[sl], CLASSIFICATION_METRICS)
        for m in CLASSIFICATION_METRICS:
            assert abs(est.estimated[m] - real[m]) < 0.05, (m, est.estimated[m], real[m])
            inside += est.lower[m] <= real[m] <= est.upper[m]
            total += 1
        assert sum(map(sum, est.confusion)) == pytest.approx(4000)
        assert est.warnings == ()
    # ±3σ bands: nearly every realized value falls inside.
    assert inside / total >= 0.95


def test_cbpe_estimate_is_exact_when_scores_are_certain() -> None:
    y = np.array([0, 1, 1, 0, 1, 0, 1, 1], dtype=np.float64)
    pred = np.array([0, 1, 0, 0, 1, 1, 1, 1], dtype=np.float64)
    fitted = CBPE().fit(y, pred, y)  # scores equal to the labels: perfectly calibrated, certain
    est = fitted.score(pred, y)
    real = binary_metrics(y, pred, y, CLASSIFICATION_METRICS)
    for m in CLASSIFICATION_METRICS:
        assert est.estimated[m] == pytest.approx(real[m]), m
    assert est.confusion == ((2.0, 1.0), (1.0, 4.0))


def test_cbpe_multiclass_tracks_realized() -> None:
    rng = np.random.default_rng(7)
    logits = rng.normal(size=(30000, 3)) * 1.5
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    y = (rng.random((30000, 1)) > np.cumsum(p, axis=1)[:, :-1]).sum(axis=1)
    pred = p.argmax(axis=1)
    fitted = CBPE().fit(y[:10000], pred[:10000], p[:10000])
    est = fitted.score(pred[10000:], p[10000:])
    real = multiclass_metrics(y[10000:], pred[10000:], p[10000:], CLASSIFICATION_METRICS)
    for m in CLASSIFICATION_METRICS:
        assert abs(est.estimated[m] - real[m]) < 0.02, m
        assert est.lower[m] < est.estimated[m] < est.upper[m]
    assert len(est.confusion) == 3 and sum(map(sum, est.confusion)) == pytest.approx(20000)


def test_cbpe_warns_when_the_window_leaves_the_reference_support() -> None:
    rng = np.random.default_rng(8)
    y, pred, raw = _binary_data(rng, 10000)
    fitted = CBPE().fit(y, pred, raw * 0.5)  # reference scores only in [0, 0.5]
    est = fitted.score(pred[:2000], raw[:2000])
    assert est.outside_support > 0.3
    assert est.warnings and "outside the reference's range" in est.warnings[0]


@pytest.mark.parametrize(
    ("kwargs", "wanted"),
    [
        ({"metrics": ("accuracy", "auc")}, "unknown metric 'auc'"),
    ],
)
def test_cbpe_settings_fail_fast(kwargs: dict[str, object], wanted: str) -> None:
    with pytest.raises(InputError, match=wanted):
        CBPE(**kwargs)  # type: ignore[arg-type]


def test_cbpe_refuses_windows_of_the_wrong_shape() -> None:
    fitted = CBPE().fit(np.array([0.0, 1, 0, 1]), np.array([0.0, 1, 1, 1]), np.array([0.1, 0.9, 0.6, 0.8]))
    with pytest.raises(InputError, match="reference had 2 classes"):
        fitted.score(np.array([0, 1]), np.array([[0.1, 0.9], [0.2, 0.8]]))
    with pytest.raises(InputError, match="must not be missing"):
        fitted.score(np.array([0.0, 1]), np.array([0.1, math.nan]))
