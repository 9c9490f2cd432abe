"""Isotonic calibration of classifier scores (pure numpy), as scikit-learn's ``IsotonicRegression``.

Equal scores are merged into one point (mean label, summed weight), the pool
adjacent violators algorithm makes the labels non-decreasing in the score, and
a new score is mapped by linear interpolation between the fitted points,
clipped at both ends. ``fit_calibrator`` fits it only when it makes the
reference better calibrated (cross-fitted expected calibration error), since
re-calibrating an already calibrated model only adds noise.

>>> import numpy as np
>>> cal = Isotonic.fit(np.array([0.1, 0.2, 0.3, 0.4]), np.array([0.0, 1.0, 0.0, 1.0]))
>>> cal(np.array([0.1, 0.25, 0.4])).round(2).tolist()
[0.0, 0.5, 1.0]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from inferwatch.quality.performance._perf_metrics import expected_calibration_error

__all__ = ["Calibrator", "Identity", "Isotonic", "fit_calibrator"]

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Identity:
    """The scores as they are (the model is already calibrated)."""

    def __call__(self, score: Array) -> Array:
        """Return ``score`` unchanged."""
        return score


@dataclass(frozen=True)
class Isotonic:
    """A non-decreasing step-and-ramp map from score to probability."""

    x: Array
    y: Array

    @classmethod
    def fit(cls, score: Array, label: Array) -> Isotonic:
        """Fit on reference scores and 0/1 labels."""
        ux, inv = np.unique(score, return_inverse=True)
        w = np.bincount(inv).astype(np.float64)
        y = np.bincount(inv, weights=label) / w
        return cls(ux, _pav(y, w))

    def __call__(self, score: Array) -> Array:
        """Calibrated probabilities of ``score`` (clipped to the fitted range)."""
        if self.x.size == 1:
            return np.full(score.shape, self.y[0])
        return np.interp(score, self.x, self.y)


Calibrator = Identity | Isotonic


def _pav(y: Array, w: Array) -> Array:
    """Pool adjacent violators: the weighted least-squares non-decreasing fit of ``y``."""
    try:  # scipy >= 1.12 has it in C++; the loop below is the same algorithm for older scipy
        from scipy.optimize import isotonic_regression
    except ImportError:  # pragma: no cover - old scipy
        return _pav_py(y, w)
    return np.asarray(isotonic_regression(y, weights=w).x, dtype=np.float64)


def _pav_py(y: Array, w: Array) -> Array:
    """Pool adjacent violators in pure Python."""
    # Blocks kept as parallel stacks (value, weight, length); merge while the order is violated.
    vals: list[float] = []
    wts: list[float] = []
    lens: list[int] = []
    for yi, wi in zip(y.tolist(), w.tolist(), strict=True):
        vals.append(yi)
        wts.append(wi)
        lens.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            wt = wts[-2] + wts[-1]
            v = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / wt
            n = lens[-2] + lens[-1]
            del vals[-1], wts[-1], lens[-1]
            vals[-1], wts[-1], lens[-1] = v, wt, n
    return np.repeat(np.array(vals), np.array(lens))


def _cross_fitted(score: Array, label: Array, folds: int, rng: np.random.Generator) -> Array:
    """Scores calibrated by isotonic maps fitted on the other folds (no row sees its own label)."""
    fold = rng.permutation(score.size) % folds
    out = np.empty_like(score)
    for k in range(folds):
        test = fold == k
        out[test] = Isotonic.fit(score[~test], label[~test])(score[test])
    return out


def fit_calibrator(score: Array, label: Array, *, folds: int = 5, seed: int = 0) -> Calibrator:
    """Isotonic when it lowers the cross-fitted calibration error of the reference, else identity."""
    if np.unique(label).size < 2 or score.size < 2 * folds:
        return Identity()
    before = expected_calibration_error(label, score)
    after = expected_calibration_error(label, _cross_fitted(score, label, folds, np.random.default_rng(seed)))
    return Isotonic.fit(score, label) if after < before else Identity()
