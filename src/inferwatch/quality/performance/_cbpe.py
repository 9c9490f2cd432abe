"""Confidence-based performance estimation (CBPE): classifier performance without labels.

Fit on a labelled reference: one calibrator per class (isotonic, only where it
improves calibration; see ``_calibration``). Score a window of predictions
without labels: with calibrated probabilities ``p``, the expected confusion
matrix is ``TP = Σ p·[ŷ=1]``, ``FP = Σ (1−p)·[ŷ=1]``, ``FN = Σ p·[ŷ=0]``,
``TN = Σ (1−p)·[ŷ=0]``, and accuracy, precision, recall and F1 follow from it;
ROC AUC is the expected share of concordant (positive, negative) pairs under
the model's own ranking. Multiclass metrics are macro averages one-vs-rest.

The band is the sampling error, estimate ± 3 σ: σ is the standard deviation of
the realized metric when each label is an independent Bernoulli draw from its
calibrated probability (exact for accuracy and precision, the delta method for
recall and F1, Hanley and McNeil's formula for ROC AUC; macro averages divide
by the number of classes as if the classes were independent). Assumptions: calibrated
scores on the reference carry over (no concept drift, i.e. P(y | x) unchanged);
a window whose scores leave the reference's range is flagged in ``warnings``.

>>> import numpy as np
>>> rng = np.random.default_rng(1)
>>> p = rng.uniform(size=4000); y = (rng.uniform(size=4000) < p).astype(float)
>>> fitted = CBPE().fit(y[:2000], (p[:2000] > 0.5).astype(float), p[:2000])
>>> est = fitted.score((p[2000:] > 0.5).astype(float), p[2000:])
>>> abs(est.estimated["accuracy"] - 0.75) < 0.03
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from inferwatch._exceptions import InputError
from inferwatch.quality.performance._calibration import Calibrator, fit_calibrator
from inferwatch.quality.performance._perf_metrics import (
    CLASSIFICATION_METRICS,
    binary_metrics,
    multiclass_metrics,
)

__all__ = ["CBPE", "FittedCBPE", "PerformanceEstimate"]

Array = npt.NDArray[np.float64]


@dataclass(frozen=True)
class PerformanceEstimate:
    """Estimated metrics of one window, with their sampling-error band and support warnings."""

    rows: int
    estimated: dict[str, float]
    lower: dict[str, float]
    upper: dict[str, float]
    confusion: tuple[tuple[float, ...], ...]
    outside_support: float
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class CBPE:
    """The estimator's settings; ``fit`` on a labelled reference returns a ``FittedCBPE``."""

    metrics: tuple[str, ...] = CLASSIFICATION_METRICS
    seed: int = 0
    support_quantile: float = 0.005
    support_warn_share: float = 0.05

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in CLASSIFICATION_METRICS]
        if unknown:
            raise InputError(
                f"unknown metric {unknown[0]!r}: choose from {', '.join(CLASSIFICATION_METRICS)}"
            )

    def fit(self, y_true: npt.ArrayLike, y_pred: npt.ArrayLike, scores: npt.ArrayLike) -> FittedCBPE:
        """Fit calibrators on reference labels, predictions and scores (1-d binary, n × k multiclass)."""
        s, t, pred_ref = _check(scores, y_pred, y_true)
        k = 2 if s.ndim == 1 else s.shape[1]
        if t is None or np.any((t < 0) | (t >= k)):
            raise InputError(f"reference labels must be class indices 0..{k - 1}")
        cols = [s] if s.ndim == 1 else [s[:, c] for c in range(k)]
        targets = [t == 1] if s.ndim == 1 else [t == c for c in range(k)]
        cal = tuple(
            fit_calibrator(c, y.astype(np.float64), seed=self.seed)
            for c, y in zip(cols, targets, strict=True)
        )
        lo = tuple(float(np.quantile(c, self.support_quantile)) for c in cols)
        hi = tuple(float(np.quantile(c, 1 - self.support_quantile)) for c in cols)
        # The reference's own realized metrics: what the alert rules compare a window's estimate with.
        truth, pred = t.astype(np.float64), pred_ref.astype(np.float64)
        ref = (binary_metrics(truth, pred, s, self.metrics) if k == 2
               else multiclass_metrics(truth, pred, s, self.metrics))
        return FittedCBPE(self, k, cal, lo, hi, ref)


@dataclass(frozen=True)
class FittedCBPE:
    """Calibrators fitted on the reference; ``score`` estimates one window's performance."""

    settings: CBPE
    classes: int
    calibrators: tuple[Calibrator, ...]
    support_low: tuple[float, ...]
    support_high: tuple[float, ...]
    reference: dict[str, float] = field(default_factory=dict)
    """The realized metrics on the reference itself (the level an estimate is compared with)."""

    def calibrated(self, scores: Array) -> Array:
        """Calibrated class probabilities: 1-d for binary, n × k (rows sum to 1) for multiclass."""
        if self.classes == 2 and scores.ndim == 1:
            return np.clip(self.calibrators[0](scores), 0.0, 1.0)
        p = np.column_stack([cal(scores[:, c]) for c, cal in enumerate(self.calibrators)])
        total = p.sum(axis=1, keepdims=True)
        # A row calibrated to all zeros has no information: fall back to uniform.
        return np.where(total > 0, p / np.where(total > 0, total, 1.0), 1.0 / self.classes)

    def score(self, y_pred: npt.ArrayLike, scores: npt.ArrayLike) -> PerformanceEstimate:
        """Estimate the metrics of a window of predictions and scores (no labels)."""
        s, _, pred = _check(scores, y_pred, None)
        if (s.ndim == 1) != (self.classes == 2):
            raise InputError(f"window scores have shape {s.shape}; the reference had {self.classes} classes")
        if s.shape[0] == 0:
            raise InputError("empty window: nothing to estimate")
        p = self.calibrated(s)
        if self.classes == 2:
            est, conf, sd = _binary(pred, s, p, self.settings)
        else:
            est, conf, sd = _multiclass(pred, s, p, self.settings)
        out_share = self._outside(s)
        warn: tuple[str, ...] = ()
        if out_share > self.settings.support_warn_share:
            warn = (
                f"{out_share:.1%} of the window's scores lie outside the reference's range "
                f"(expected {2 * self.settings.support_quantile:.1%}): the estimate may not hold",
            )
        lower = {m: _clip(est[m] - 3 * sd[m]) for m in est}
        upper = {m: _clip(est[m] + 3 * sd[m]) for m in est}
        return PerformanceEstimate(int(s.shape[0]), est, lower, upper, conf, out_share, warn)

    def _outside(self, s: Array) -> float:
        cols = [s] if s.ndim == 1 else [s[:, c] for c in range(s.shape[1])]
        out = np.zeros(s.shape[0], dtype=bool)
        for c, lo, hi in zip(cols, self.support_low, self.support_high, strict=True):
            out |= (c < lo) | (c > hi)
        return float(out.mean())


def _check(
    scores: npt.ArrayLike, y_pred: npt.ArrayLike, y_true: npt.ArrayLike | None
) -> tuple[Array, npt.NDArray[np.int64] | None, npt.NDArray[np.int64]]:
    s = np.asarray(scores, dtype=np.float64)
    pred = np.asarray(y_pred, dtype=np.float64)
    if s.ndim not in (1, 2) or s.shape[0] != pred.shape[0]:
        raise InputError(f"scores ({s.shape}) and predictions ({pred.shape}) must have one row each")
    if not (np.all(np.isfinite(s)) and np.all(np.isfinite(pred))):
        raise InputError("scores and predictions must not be missing (NaN)")
    t = None
    if y_true is not None:
        tf = np.asarray(y_true, dtype=np.float64)
        if tf.shape != pred.shape or not np.all(np.isfinite(tf)):
            raise InputError("reference labels must be given (no missing values) for every row")
        t = tf.astype(np.int64)
    return s, t, pred.astype(np.int64)


def _clip(v: float) -> float:
    """A band edge inside [0, 1]; NaN stays NaN (unknown)."""
    return min(1.0, max(0.0, v)) if math.isfinite(v) else math.nan


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.nan


def _expected_auc(score: Array, p: Array) -> float:
    """Expected share of concordant (positive, negative) pairs under ``score``'s ranking; ties half."""
    _, inv = np.unique(score, return_inverse=True)
    q = 1.0 - p
    gp = np.bincount(inv, weights=p)
    gq = np.bincount(inv, weights=q)
    gself = np.bincount(inv, weights=p * q)
    above = gp.sum() - np.cumsum(gp)  # probability mass of positives ranked strictly above each group
    num = float(np.sum(gq * above) + 0.5 * np.sum(gp * gq - gself))
    den = float(p.sum() * q.sum() - gself.sum())
    return _ratio(num, den)


def _binary_point(
    pred: npt.NDArray[np.int64], score: Array, p: Array
) -> tuple[dict[str, float], dict[str, float]]:
    """Point estimates and their sampling standard deviations for class 1 (delta method)."""
    on = pred == 1
    pq = p * (1 - p)
    tp, fn = float(p[on].sum()), float(p[~on].sum())
    n_on = float(on.sum())
    fp, tn = n_on - tp, float(p.size) - n_on - fn
    v1, v0 = float(pq[on].sum()), float(pq[~on].sum())  # Var(TP), Var(FN): independent Bernoulli labels
    d = 2 * tp + fp + fn
    auc = _expected_auc(score, p)
    est = {
        "accuracy": (tp + tn) / p.size,
        "precision": _ratio(tp, n_on),
        "recall": _ratio(tp, tp + fn),
        "f1": _ratio(2 * tp, d),
        "roc_auc": auc,
    }
    sd = {
        "accuracy": math.sqrt(v1 + v0) / p.size,
        "precision": _ratio(math.sqrt(v1), n_on),
        "recall": _ratio(math.sqrt(fn * fn * v1 + tp * tp * v0), (tp + fn) ** 2),
        "f1": _ratio(2 * math.sqrt((n_on + fn) ** 2 * v1 + tp * tp * v0), d * d),
        "roc_auc": _auc_sd(auc, tp + fn, fp + tn),
        "_tn": tn,
        "_fp": fp,
        "_fn": fn,
        "_tp": tp,
    }
    return est, sd


def _auc_sd(a: float, n1: float, n0: float) -> float:
    """Hanley and McNeil's (1982) standard error of ROC AUC for n1 positives and n0 negatives."""
    if not math.isfinite(a) or n1 <= 1 or n0 <= 1:
        return math.nan
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0)
    return math.sqrt(max(var, 0.0))


def _binary(
    pred: npt.NDArray[np.int64], score: Array, p: Array, cfg: CBPE
) -> tuple[dict[str, float], tuple[tuple[float, ...], ...], dict[str, float]]:
    est, sd = _binary_point(pred, score, p)
    conf = ((sd["_tn"], sd["_fp"]), (sd["_fn"], sd["_tp"]))
    return {m: est[m] for m in cfg.metrics}, conf, {m: sd[m] for m in cfg.metrics}


def _multiclass(
    pred: npt.NDArray[np.int64], s: Array, p: Array, cfg: CBPE
) -> tuple[dict[str, float], tuple[tuple[float, ...], ...], dict[str, float]]:
    k = p.shape[1]
    # Expected confusion: row = true class, column = predicted class.
    conf = np.zeros((k, k))
    for c in range(k):
        conf[:, c] = p[pred == c].sum(axis=0)
    per = [_binary_point((pred == c).astype(np.int64), s[:, c], p[:, c]) for c in range(k)]
    est = {m: float(np.mean([e[m] for e, _ in per])) for m in cfg.metrics}
    # Macro average of k estimates: Var(mean) ≈ Σ Var / k² (classes treated as independent).
    sd = {m: math.sqrt(sum(d[m] ** 2 for _, d in per)) / k for m in cfg.metrics}
    if "accuracy" in est:
        hit = p[np.arange(p.shape[0]), pred]
        est["accuracy"] = float(hit.mean())
        sd["accuracy"] = float(np.sqrt(np.sum(hit * (1 - hit)))) / p.shape[0]
    return est, tuple(tuple(float(v) for v in row) for row in conf), sd
