"""Choosing the loss model's hyper-parameters by K-fold cross-validation on the reference only.

The grid: the boosting loss (``squared_error``, or ``poisson``: a log link for
a positive loss whose scale grows with the prediction) × the tree size (7, 15
or 31 leaves) × the learning rate (0.1, 0.3), the number of trees by early
stopping inside each fit. The score is the held-out mean squared error of the
predicted absolute error: the estimate of a window is a mean of predicted
losses, and squared error is the scoring function that the conditional mean
minimises. A loss is mostly noise, so grid points often differ by less than
their standard error: the one-standard-error rule (Hastie, Tibshirani and
Friedman, *Elements of Statistical Learning*, 7.10) takes the cheapest point
(fewest trees × depth) whose score is within one standard error of the best.
Then, with the chosen parameters, the squared error modelled as ``c · m(x)²``
(one model) against a model of its own, by the held-out mean squared error of
(y − ŷ)², by the same rule. The analysis data never takes part.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from inferwatch.quality.performance._dle_model import HGBParams, hgb_regressor

__all__ = ["GRID", "TuneReport", "tune"]

Array = npt.NDArray[np.float64]

GRID = tuple(
    HGBParams(loss=loss, max_leaf_nodes=leaves, learning_rate=rate)
    for loss in ("squared_error", "poisson")
    for leaves in (7, 15, 31)
    for rate in (0.1, 0.3)
)


@dataclass(frozen=True)
class TuneReport:
    """The cross-validated choice and the figures it was made on."""

    params: HGBParams
    squared_from_absolute: bool
    folds: int
    abs_mse: tuple[tuple[str, float], ...]
    """Held-out MSE of the predicted absolute error per grid point (label, value)."""
    abs_se: float
    """The standard error of the best grid point's held-out MSE (the one-standard-error rule's margin)."""
    cost: tuple[float, ...]
    """Per grid point: mean trees × log2(leaves), a prediction's cost."""
    abs_mse_constant: float
    """The same for the reference's mean absolute error as a constant (the no-model baseline)."""
    sq_mse_scaled: float
    sq_mse_direct: float
    sq_mse_constant: float

    def lines(self) -> list[str]:
        """A short human-readable report."""
        out = [f"{self.folds}-fold CV on the reference, held-out MSE of |y - y_pred|:"]
        out += [f"  {label:<34} {v:>14,.1f}  cost {c:5.0f}" for (label, v), c in zip(self.abs_mse, self.cost,
                                                                                      strict=True)]
        out.append(f"  {'constant (no model)':<34} {self.abs_mse_constant:>14,.1f}")
        out.append(f"chosen: {self.params.label()} (the cheapest within one standard error, "
                   f"{self.abs_se:,.1f}, of the best)")
        out.append(
            f"held-out MSE of (y - y_pred)^2: c*m(x)^2 {self.sq_mse_scaled:.4g}, own model "
            f"{self.sq_mse_direct:.4g}, constant {self.sq_mse_constant:.4g}; chosen: "
            + ("c*m(x)^2" if self.squared_from_absolute else "own model")
        )
        return out


def _folds(n: int, k: int, seed: int) -> list[npt.NDArray[np.intp]]:
    return np.array_split(np.random.default_rng(seed).permutation(n), k)


def _cv_predict(
    params: HGBParams, cat: Sequence[bool], x: Array, y: Array, parts: list[npt.NDArray[np.intp]], seed: int,
) -> tuple[Array, Array, float]:
    """Out-of-fold predictions of ``y``, each fold's mean fitted m(x)² on its training rows, the cost."""
    out = np.empty_like(y)
    fitted_sq_mean = np.empty_like(y)
    trees = []
    for part in parts:
        train = np.ones(y.size, dtype=bool)
        train[part] = False
        model = hgb_regressor(params, cat, int(train.sum()), seed).fit(x[train], y[train])
        out[part] = np.maximum(model.predict(x[part]), 0.0)
        fitted_sq_mean[part] = float(np.mean(np.maximum(model.predict(x[train]), 0.0) ** 2))
        trees.append(model.n_iter_)
    return out, fitted_sq_mean, float(np.mean(trees)) * math.log2(params.max_leaf_nodes)


def _se(sq_err: Array) -> float:
    return float(np.std(sq_err) / math.sqrt(sq_err.size))


def tune(x: Array, cat: Sequence[bool], loss: dict[str, Array], folds: int, seed: int) -> TuneReport:
    """Cross-validate the grid on the reference; return the choice and its figures."""
    parts = _folds(loss["abs"].size, max(2, folds), seed)
    abs_y, sq_y = loss["abs"], loss["sq"]
    scores: list[tuple[HGBParams, float, Array, Array, float]] = []
    for params in GRID:
        pred, sq_mean, cost = _cv_predict(params, cat, x, abs_y, parts, seed)
        scores.append((params, float(np.mean((pred - abs_y) ** 2)), pred, sq_mean, cost))
    top = min(scores, key=lambda s: s[1])
    margin = _se((top[2] - abs_y) ** 2)
    best, _, pred, sq_mean, _ = min((s for s in scores if s[1] <= top[1] + margin), key=lambda s: s[4])
    # c per fold from its training rows: mean(e²) / mean(m(x)²), both on the same rows.
    c = np.empty_like(sq_y)
    for part in parts:
        train = np.ones(sq_y.size, dtype=bool)
        train[part] = False
        c[part] = float(sq_y[train].mean()) / max(float(sq_mean[part][0]), 1e-300)
    scaled = float(np.mean((c * pred**2 - sq_y) ** 2))
    direct_pred, _, _ = _cv_predict(best, cat, x, sq_y, parts, seed)
    direct_err = (direct_pred - sq_y) ** 2
    direct = float(np.mean(direct_err))
    return TuneReport(
        params=best,
        # One model instead of two unless the second is better by more than its standard error.
        squared_from_absolute=scaled <= direct + _se(direct_err),
        folds=len(parts),
        abs_mse=tuple((p.label(), s) for p, s, _, _, _ in scores),
        abs_se=margin,
        cost=tuple(s[4] for s in scores),
        abs_mse_constant=float(np.var(abs_y)),
        sq_mse_scaled=scaled,
        sq_mse_direct=direct,
        sq_mse_constant=float(np.var(sq_y)),
    )
