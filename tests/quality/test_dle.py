"""Issue 36 #2: direct loss estimation (DLE) for regressors, against a simulation whose loss is known."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from sklearn import metrics as skm

from inferwatch._exceptions import InputError
from inferwatch.quality import DLE, FittedDLE, HGBParams, estimate_regression_chunks
from inferwatch.quality.performance._dle_features import FeatureEncoder

SQRT_2_PI = math.sqrt(2 / math.pi)


def _simulate(n: int, seed: int, shift: float = 0.0) -> dict[str, np.ndarray]:
    """y = ŷ + N(0, s(x)²) with s(x) = 1 + 3·x0 (+1 on category "b"): E|e| = s·√(2/π), E e² = s²."""
    rng = np.random.default_rng(seed)
    x0 = rng.beta(1 + 4 * shift, 1, size=n)  # shift > 0 moves x0 toward 1: a larger loss
    x1 = rng.normal(size=n)
    cat = rng.choice(np.array(["a", "b"], dtype=object), size=n, p=[0.7, 0.3])
    scale = 1 + 3 * x0 + (cat == "b")
    y_pred = 10 + 2 * x1
    y = y_pred + rng.normal(size=n) * scale
    return {"x0": x0, "x1": x1, "cat": cat, "y_pred": y_pred, "y": y, "scale": scale}


def _fit(ref: dict[str, np.ndarray], settings: DLE | None = None) -> tuple[FittedDLE, FeatureEncoder]:
    enc = FeatureEncoder.fit(ref, ("x0", "x1", "cat"), where="ref")
    x = enc.transform(ref, where="ref")
    fitted = (settings or DLE()).fit(x, ref["y"], ref["y_pred"], enc.categorical)
    return fitted, enc


@pytest.fixture(scope="module")
def reference() -> dict[str, np.ndarray]:
    return _simulate(10_000, seed=1)


@pytest.fixture(scope="module")
def fitted(reference: dict[str, np.ndarray]) -> tuple[FittedDLE, FeatureEncoder]:
    return _fit(reference)


@pytest.mark.parametrize("shift", [0.0, 1.0])
def test_estimate_follows_the_known_expected_loss_under_covariate_shift(
    fitted: tuple[FittedDLE, FeatureEncoder], shift: float
) -> None:
    model, enc = fitted
    ana = _simulate(20_000, seed=2, shift=shift)
    est = model.score(enc.transform(ana, where="ana"), ana["y_pred"])
    want_mae = float(np.mean(ana["scale"])) * SQRT_2_PI
    want_rmse = math.sqrt(float(np.mean(ana["scale"] ** 2)))
    # The expected losses of the window (not its noisy realization), within 5 %: over reference
    # seeds 1-6 the shifted estimate lay within 2.6 % of it (the reference's own sampling error).
    assert est.estimated["mae"] == pytest.approx(want_mae, rel=0.05)
    assert est.estimated["rmse"] == pytest.approx(want_rmse, rel=0.05)
    if shift:  # the shift raises the loss and the estimate follows it
        assert est.estimated["mae"] > model.reference["mae"] * 1.15


def test_band_covers_the_realized_loss_of_fresh_windows(fitted: tuple[FittedDLE, FeatureEncoder]) -> None:
    model, enc = fitted
    ana = _simulate(200 * 60, seed=3)
    x = enc.transform(ana, where="ana")
    inside = {"mae": 0, "rmse": 0}
    for k in range(60):
        sl = slice(200 * k, 200 * (k + 1))
        est = model.score(x[sl], ana["y_pred"][sl])
        err = ana["y"][sl] - ana["y_pred"][sl]
        real = {"mae": float(np.mean(np.abs(err))), "rmse": float(np.sqrt(np.mean(err**2)))}
        for m in inside:
            inside[m] += est.lower[m] <= real[m] <= est.upper[m]
            assert est.lower[m] < est.estimated[m] < est.upper[m]
    # ±3σ: 99.7 % if the model were exact; at least 55 of 60 windows allow for its error.
    assert inside["mae"] >= 55 and inside["rmse"] >= 55, inside


def test_band_is_narrower_than_nannymls_sd_of_the_loss(
    fitted: tuple[FittedDLE, FeatureEncoder], reference: dict[str, np.ndarray]
) -> None:
    # σ from the residual loss: the part of the loss the model explains is not sampling error.
    model, _ = fitted
    sd_loss = float(np.std(np.abs(reference["y"] - reference["y_pred"])))
    assert model.residual_sd["abs"] < sd_loss


def test_realized_metrics_equal_scikit_learns() -> None:
    ref, ana = _simulate(3000, seed=4), _simulate(2500, seed=5)
    truth = ana["y"].copy()
    truth[7] = np.nan  # a row without a label yet is left out of the realized metrics
    chunks, _ = estimate_regression_chunks(
        ref, ana, features=("x0", "x1", "cat"), y_pred="y_pred", y_true="y", chunk_size=1000,
        settings=DLE(metrics=("mae", "rmse", "mape")), truth=truth,
    )
    assert [(c.start, c.end) for c in chunks] == [(0, 999), (1000, 1999)]  # the partial chunk dropped
    for c in chunks:
        sl = slice(c.start, c.end + 1)
        keep = ~np.isnan(truth[sl])
        t, p = truth[sl][keep], ana["y_pred"][sl][keep]
        assert c.realized is not None
        assert c.realized["mae"] == pytest.approx(skm.mean_absolute_error(t, p), rel=1e-12)
        assert c.realized["rmse"] == pytest.approx(skm.root_mean_squared_error(t, p), rel=1e-12)
        assert c.realized["mape"] == pytest.approx(skm.mean_absolute_percentage_error(t, p), rel=1e-12)


def test_a_perfect_model_has_zero_estimated_loss() -> None:
    rng = np.random.default_rng(6)
    x = rng.normal(size=(500, 2))
    fitted = DLE().fit(x, x[:, 0], x[:, 0])
    est = fitted.score(x[:100], x[:100, 0])
    assert est.estimated == {"mae": 0.0, "rmse": 0.0}


def test_tuning_on_the_reference_reports_the_grid_and_picks_its_best() -> None:
    ref = _simulate(1200, seed=7)
    fitted, _ = _fit(ref, DLE(tune=True, folds=2))
    cv = fitted.cv
    assert cv is not None and len(cv.abs_mse) == 12
    best = min(v for _, v in cv.abs_mse)
    # The one-standard-error rule: the cheapest grid point within one standard error of the best.
    near = [(c, label) for (label, v), c in zip(cv.abs_mse, cv.cost, strict=True) if v <= best + cv.abs_se]
    assert fitted.params.label() == cv.params.label() == min(near)[1]
    # The loss model explains part of the heteroscedastic loss: better than the constant.
    assert best < cv.abs_mse_constant
    assert fitted.squared_from_absolute == cv.squared_from_absolute
    assert fitted.squared_from_absolute or cv.sq_mse_direct < cv.sq_mse_scaled
    assert any("chosen" in line for line in cv.lines())


def test_window_outside_the_reference_range_warns(fitted: tuple[FittedDLE, FeatureEncoder]) -> None:
    model, enc = fitted
    ana = _simulate(400, seed=8)
    ana["x1"] = ana["x1"] + 100
    est = model.score(enc.transform(ana, where="ana"), ana["y_pred"])
    assert est.outside_support == 1.0
    assert "outside the reference's range" in est.warnings[0]


def test_unseen_category_is_missing_and_text_in_a_numeric_column_is_an_error() -> None:
    ref = _simulate(50, seed=9)
    enc = FeatureEncoder.fit(ref, ("x0", "cat"), where="ref.csv")
    window = {"x0": np.array([0.5]), "cat": np.array(["zzz"], dtype=object)}
    x = enc.transform(window, where="ana.csv")
    assert math.isnan(x[0, 1]) and enc.unseen(window, x).tolist() == [True]
    bad = {"x0": np.array(["high"], dtype=object), "cat": np.array(["a"], dtype=object)}
    with pytest.raises(InputError, match=r"ana.csv: column 'x0' must be numeric"):
        enc.transform(bad, where="ana.csv")


def test_bad_settings_and_inputs_raise_input_errors() -> None:
    with pytest.raises(InputError, match="unknown metric 'r2'"):
        DLE(metrics=("r2",))
    with pytest.raises(InputError, match="20 at least"):
        DLE().fit(np.zeros((5, 1)), np.zeros(5), np.zeros(5))
    with pytest.raises(InputError, match="true value"):
        DLE().fit(np.zeros((30, 1)), np.full(30, np.nan), np.zeros(30))


def test_params_label_names_the_choice() -> None:
    assert HGBParams(loss="squared_error", max_leaf_nodes=7).label() == "squared_error, 7 leaves, lr 0.3"


def test_without_scikit_learn_the_error_names_the_extra() -> None:
    # sys.modules[name] = None makes that import fail, as on an install without the extra.
    code = (
        "import sys; sys.modules['sklearn'] = None; sys.modules['sklearn.ensemble'] = None\n"
        "import numpy as np\n"
        "from inferwatch.quality import DLE\n"
        "try:\n    DLE().fit(np.zeros((30, 1)), np.ones(30), np.zeros(30))\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == (
        "ToolMissingError direct loss estimation needs scikit-learn: pip install 'inferwatch[regression]'"
    )


def test_prediction_alone_and_an_input_never_seen_in_the_reference() -> None:
    # No inputs: the loss is modelled from the prediction; an input missing on every reference row
    # is no error (the gradient boosting model takes missing values).
    ref, ana = _simulate(2000, seed=10), _simulate(1000, seed=11)
    ref["empty"] = np.full(2000, np.nan)
    ana["empty"] = np.full(1000, np.nan)
    for features in ((), ("x0", "empty")):
        chunks, fitted = estimate_regression_chunks(
            ref, ana, features=features, y_pred="y_pred", y_true="y", chunk_size=1000
        )
        assert len(chunks) == 1 and fitted.reference["mae"] > 0
        assert chunks[0].estimate.estimated["mae"] == pytest.approx(fitted.reference["mae"], rel=0.15)
