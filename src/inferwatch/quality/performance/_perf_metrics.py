"""Realized performance metrics (pure numpy), defined as scikit-learn defines them.

Binary metrics take ``y_true`` and ``y_pred`` in {0, 1} and a score for class 1;
multiclass metrics are macro averages over the classes (one-vs-rest for ROC
AUC). A metric that is undefined on the data (no positive prediction for
precision, one class only for ROC AUC) is NaN rather than an exception, so
that a window with few labels reads as "unknown", not as 0.

>>> import numpy as np
>>> round(roc_auc(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8])), 2)
0.75
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from scipy.stats import rankdata

__all__ = [
    "CLASSIFICATION_METRICS",
    "REGRESSION_METRICS",
    "accuracy",
    "binary_metrics",
    "confusion_binary",
    "expected_calibration_error",
    "f1",
    "log_loss",
    "mae",
    "mape",
    "multiclass_metrics",
    "precision",
    "recall",
    "regression_metrics",
    "roc_auc",
]

Array = npt.NDArray[np.float64]

CLASSIFICATION_METRICS = ("roc_auc", "accuracy", "f1", "precision", "recall")
REGRESSION_METRICS = ("mae", "rmse", "mape")


def confusion_binary(y_true: Array, y_pred: Array) -> tuple[float, float, float, float]:
    """(TN, FP, FN, TP) counts for labels in {0, 1}."""
    t, p = y_true.astype(bool), y_pred.astype(bool)
    tp = float(np.sum(t & p))
    fp = float(np.sum(~t & p))
    fn = float(np.sum(t & ~p))
    return float(t.size) - tp - fp - fn, fp, fn, tp


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.nan


def accuracy(y_true: Array, y_pred: Array) -> float:
    """Share of predictions equal to the label."""
    return float(np.mean(y_true == y_pred)) if y_true.size else math.nan


def precision(y_true: Array, y_pred: Array) -> float:
    """TP / (TP + FP) for class 1."""
    _, fp, _, tp = confusion_binary(y_true, y_pred)
    return _ratio(tp, tp + fp)


def recall(y_true: Array, y_pred: Array) -> float:
    """TP / (TP + FN) for class 1."""
    _, _, fn, tp = confusion_binary(y_true, y_pred)
    return _ratio(tp, tp + fn)


def f1(y_true: Array, y_pred: Array) -> float:
    """2 TP / (2 TP + FP + FN) for class 1."""
    _, fp, fn, tp = confusion_binary(y_true, y_pred)
    return _ratio(2 * tp, 2 * tp + fp + fn)


def roc_auc(y_true: Array, score: Array) -> float:
    """Area under the ROC curve by the rank-sum (Mann-Whitney) identity; ties count half."""
    pos = y_true.astype(bool)
    n1 = int(pos.sum())
    n0 = pos.size - n1
    if n1 == 0 or n0 == 0:
        return math.nan
    ranks = rankdata(score)
    return float((ranks[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def log_loss(y_true: Array, score: Array) -> float:
    """Mean negative log-likelihood of the labels under the class-1 score (clipped at float eps)."""
    eps = float(np.finfo(np.float64).eps)
    p = np.clip(score, eps, 1 - eps)
    t = y_true.astype(bool)
    return float(-np.mean(np.where(t, np.log(p), np.log1p(-p))))


def expected_calibration_error(y_true: Array, score: Array, bins: int = 10) -> float:
    """Σ_b (n_b / n)·|mean(y) − mean(score)| over equal-width score bins."""
    if y_true.size == 0:
        return math.nan
    idx = np.minimum((score * bins).astype(np.int64), bins - 1)
    gap = np.bincount(idx, weights=y_true - score, minlength=bins)
    return float(np.sum(np.abs(gap)) / y_true.size)


def binary_metrics(y_true: Array, y_pred: Array, score: Array, names: tuple[str, ...]) -> dict[str, float]:
    """The named binary metrics of one window."""
    fns = {
        "accuracy": lambda: accuracy(y_true, y_pred),
        "precision": lambda: precision(y_true, y_pred),
        "recall": lambda: recall(y_true, y_pred),
        "f1": lambda: f1(y_true, y_pred),
        "roc_auc": lambda: roc_auc(y_true, score),
        "log_loss": lambda: log_loss(y_true, score),
        "ece": lambda: expected_calibration_error(y_true, score),
    }
    return {name: fns[name]() for name in names}


def multiclass_metrics(
    y_true: npt.ArrayLike, y_pred: npt.ArrayLike, scores: Array, names: tuple[str, ...]
) -> dict[str, float]:
    """Macro-averaged metrics over the classes 0..k-1 (``scores`` is n × k)."""
    y_true, y_pred = np.asarray(y_true, dtype=np.float64), np.asarray(y_pred, dtype=np.float64)
    k = scores.shape[1]
    out: dict[str, float] = {}
    for name in names:
        if name == "accuracy":
            out[name] = accuracy(y_true, y_pred)
            continue
        per = []
        for c in range(k):
            t = (y_true == c).astype(np.float64)
            p = (y_pred == c).astype(np.float64)
            per.append(binary_metrics(t, p, scores[:, c], (name,))[name])
        out[name] = float(np.mean(per))
    return out


def mae(y_true: Array, y_pred: Array) -> float:
    """Mean absolute error."""
    return float(np.mean(np.abs(y_true - y_pred)))


def mape(y_true: Array, y_pred: Array) -> float:
    """Mean absolute percentage error as scikit-learn defines it (denominator floored at float eps)."""
    eps = float(np.finfo(np.float64).eps)
    return float(np.mean(np.abs(y_true - y_pred) / np.maximum(np.abs(y_true), eps)))


def regression_metrics(y_true: Array, y_pred: Array) -> dict[str, float]:
    """MAE, RMSE and MAPE of one window."""
    return {
        "mae": mae(y_true, y_pred),
        "rmse": float(np.sqrt(np.mean((y_true - y_pred) ** 2))),
        "mape": mape(y_true, y_pred),
    }
