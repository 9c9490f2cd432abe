"""Direct loss estimation (DLE): a regressor's MAE, RMSE and MAPE without labels.

Fit on a labelled reference a model of each row's loss from the model's inputs
and its prediction: |y − ŷ| for MAE, (y − ŷ)² for RMSE, |y − ŷ| / |y| for MAPE.
A window's estimate is the mean of the predicted losses (RMSE: the square
root of the mean predicted squared error). The loss model is scikit-learn's
``HistGradientBoostingRegressor`` (native categorical features and missing
values), an optional extra: ``pip install 'inferwatch[regression]'``.

By default the squared error is modelled as ``c · m(x)²``, with ``m`` the
model of the absolute error and ``c`` fitted on the reference (a location-scale
error: one model instead of two); ``DLE(tune=True)`` chooses, by K-fold
cross-validation on the reference only, between that and a model of its own,
and the boosting hyper-parameters from a small grid (``_dle_tune``).

The band is the sampling error of the realized metric around the estimate,
estimate ± 3σ, with σ = sd(loss − predicted loss) / √n on the reference (the
part of the loss the model does not explain: NannyML uses sd(loss) / √n, which
also counts the part it does); RMSE's band is the square root of the MSE's.
Assumptions: P(y | x) unchanged since the reference (no concept drift); a
window whose inputs leave the reference's range is flagged in ``warnings``.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> x = rng.uniform(0, 1, size=(4000, 1)); y_pred = np.zeros(4000)
>>> y = rng.normal(0, 1 + 3 * x[:, 0])  # |error| grows with x
>>> fitted = DLE().fit(x[:3000], y[:3000], y_pred[:3000])
>>> est = fitted.score(x[3000:], y_pred[3000:])
>>> bool(abs(est.estimated["mae"] - np.abs(y[3000:]).mean()) < 0.1)
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.performance._cbpe import PerformanceEstimate
from inferwatch.quality.performance._dle_model import HGBParams, hgb_regressor, thread_limit
from inferwatch.quality.performance._dle_tune import TuneReport, tune
from inferwatch.quality.performance._perf_metrics import REGRESSION_METRICS, mape

__all__ = ["DLE", "FittedDLE", "losses"]

Array = npt.NDArray[np.float64]


def losses(y_true: Array, y_pred: Array) -> dict[str, Array]:
    """Each row's loss per target: ``abs`` (MAE), ``sq`` (RMSE), ``ape`` (MAPE, as scikit-learn's)."""
    err = y_true - y_pred
    eps = float(np.finfo(np.float64).eps)
    return {"abs": np.abs(err), "sq": err * err, "ape": np.abs(err) / np.maximum(np.abs(y_true), eps)}


TARGET = {"mae": "abs", "rmse": "sq", "mape": "ape"}


@dataclass(frozen=True)
class DLE:
    """The estimator's settings; ``fit`` on a labelled reference returns a ``FittedDLE``."""

    metrics: tuple[str, ...] = ("mae", "rmse")
    params: HGBParams = field(default_factory=HGBParams)
    squared_from_absolute: bool = True
    """Model the squared error as c · m(x)² (one model) instead of a model of its own."""
    tune: bool = False
    """Choose ``params`` and ``squared_from_absolute`` by cross-validation on the reference."""
    folds: int = 3
    seed: int = 0
    support_warn_share: float = 0.05
    threads: int | None = 1
    """OpenMP threads of the loss model: on a busy host idle-waiting threads cost more than they
    save (``DLE(tune=True)`` on 3,000 rows: 65 s with two threads on a loaded two-core host, 0.7 s
    with one); None uses every core."""

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in REGRESSION_METRICS]
        if unknown or not self.metrics:
            raise InputError(
                f"unknown metric {(unknown or [''])[0]!r}: choose from {', '.join(REGRESSION_METRICS)}"
            )

    def fit(
        self, features: npt.ArrayLike, y_true: npt.ArrayLike, y_pred: npt.ArrayLike,
        categorical: Sequence[bool] = (), support: tuple[Array, Array] | None = None,
    ) -> FittedDLE:
        """Fit the loss models on reference inputs (n × d; categoricals as codes), truth and predictions."""
        with thread_limit(self.threads):
            return self._fit(features, y_true, y_pred, categorical, support)

    def _fit(
        self, features: npt.ArrayLike, y_true: npt.ArrayLike, y_pred: npt.ArrayLike,
        categorical: Sequence[bool], support: tuple[Array, Array] | None,
    ) -> FittedDLE:
        x, pred = _inputs(features, y_pred)
        t = np.asarray(y_true, dtype=np.float64)
        if t.shape != pred.shape or not np.all(np.isfinite(t)):
            raise InputError("the reference needs a true value (not missing) for every row")
        if t.size < 20:
            raise InputError(f"the reference has {t.size} rows: 20 at least to fit a loss model")
        cat = tuple(categorical) or (False,) * (x.shape[1] - 1)
        cat = (*cat, False)  # the prediction itself is the last input
        loss = losses(t, pred)
        low, high = support or _range(x)
        empty = ~np.isfinite(x).any(axis=0)
        if empty.any():  # the model cannot bin an input with no value: a constant it never splits on
            x = np.where(empty, 0.0, x)
        params, from_abs, cv = self.params, self.squared_from_absolute, None
        if self.tune:
            cv = tune(x, cat, loss, self.folds, self.seed)
            params, from_abs = cv.params, cv.squared_from_absolute
        needed = {TARGET[m] for m in self.metrics}
        if "sq" in needed and from_abs:
            needed = (needed - {"sq"}) | {"abs"}
        models = {k: _fit_one(params, cat, x, loss[k], self.seed) for k in sorted(needed)}
        fitted_loss = {k: m.predict(x) for k, m in models.items()}
        scale = 1.0
        if "abs" in fitted_loss and from_abs:
            m2 = fitted_loss["abs"] ** 2
            scale = float(loss["sq"].mean() / m2.mean()) if m2.mean() > 0 else 1.0
            fitted_loss["sq"] = scale * m2
        resid = {k: float(np.std(loss[k] - v)) for k, v in fitted_loss.items()}
        reference = {
            "mae": float(loss["abs"].mean()), "rmse": math.sqrt(float(loss["sq"].mean())),
            "mape": mape(t, pred),
        }
        return FittedDLE(self, params, from_abs, models, scale, resid, cat, low, high,
                         {m: reference[m] for m in self.metrics}, cv)


@dataclass(frozen=True, eq=False)
class FittedDLE:
    """Loss models fitted on the reference; ``score`` estimates one window's MAE, RMSE, MAPE."""

    settings: DLE
    params: HGBParams
    squared_from_absolute: bool
    models: dict[str, Any]
    scale: float
    residual_sd: dict[str, float]
    categorical: tuple[bool, ...]
    support_low: Array
    support_high: Array
    reference: dict[str, float] = field(default_factory=dict)
    """The realized metrics on the reference itself."""
    cv: TuneReport | None = None
    """The cross-validation report when fitted with ``tune=True``."""

    def predicted_losses(self, features: npt.ArrayLike, y_pred: npt.ArrayLike) -> dict[str, Array]:
        """Each row's predicted loss per target (``abs``, ``sq``, ``ape``)."""
        return self._predict(_inputs(features, y_pred)[0])

    def _predict(self, x: Array) -> dict[str, Array]:
        with thread_limit(self.settings.threads):
            out = {k: np.maximum(m.predict(x), 0.0) for k, m in self.models.items()}
        if self.squared_from_absolute and "abs" in out:
            out["sq"] = self.scale * out["abs"] ** 2
        return out

    def score(self, features: npt.ArrayLike, y_pred: npt.ArrayLike) -> PerformanceEstimate:
        """Estimate a window's metrics from its inputs and predictions (no labels)."""
        x, _ = _inputs(features, y_pred)
        if x.shape[0] == 0:
            raise InputError("empty window: nothing to estimate")
        pred = self._predict(x)
        n = x.shape[0]
        est, lower, upper = {}, {}, {}
        for m in self.settings.metrics:
            k = TARGET[m]
            mean, sd = float(pred[k].mean()), self.residual_sd[k] / math.sqrt(n)
            lo, hi = max(mean - 3 * sd, 0.0), mean + 3 * sd
            if m == "rmse":  # the band of the mean squared error, mapped through the square root
                mean, lo, hi = math.sqrt(mean), math.sqrt(lo), math.sqrt(hi)
            est[m], lower[m], upper[m] = mean, lo, hi
        share = self._outside(x)
        warn: tuple[str, ...] = ()
        if share > self.settings.support_warn_share:
            warn = (f"{share:.1%} of the window's rows have an input or prediction outside the "
                    "reference's range: the estimate may not hold",)
        return PerformanceEstimate(n, est, lower, upper, (), share, warn)

    def _outside(self, x: Array) -> float:
        with np.errstate(invalid="ignore"):
            out = (x < self.support_low) | (x > self.support_high)
        num = ~np.asarray(self.categorical, dtype=bool)
        return float(out[:, num].any(axis=1).mean())


def _fit_one(params: HGBParams, cat: Sequence[bool], x: Array, target: Array, seed: int) -> Any:
    if params.loss == "poisson" and not target.any():
        # A loss that is zero on every reference row (a perfect model) has no log: plain least squares.
        params = HGBParams(**{**params.__dict__, "loss": "squared_error"})
    return hgb_regressor(params, cat, target.size, seed).fit(x, target)


def _range(x: Array) -> tuple[Array, Array]:
    """Each column's smallest and largest value (NaN for a column without any, no warning)."""
    seen = np.isfinite(x)
    low = np.where(seen, x, np.inf).min(axis=0, initial=np.inf)
    high = np.where(seen, x, -np.inf).max(axis=0, initial=-np.inf)
    some = seen.any(axis=0)
    return np.where(some, low, np.nan), np.where(some, high, np.nan)


def _inputs(features: npt.ArrayLike, y_pred: npt.ArrayLike) -> tuple[Array, Array]:
    """The loss model's input matrix: the features with the prediction as the last column."""
    pred = np.asarray(y_pred, dtype=np.float64).reshape(-1)
    x = np.asarray(features, dtype=np.float64)
    if x.ndim == 1:
        x = x.reshape(-1, 1) if x.size else np.empty((pred.size, 0))
    if x.ndim != 2 or x.shape[0] != pred.size:
        raise InputError(f"features ({x.shape}) and predictions ({pred.shape}) must have one row each")
    if not np.all(np.isfinite(pred)):
        raise InputError("predictions must not be missing (NaN)")
    return np.column_stack([x, pred]), pred
