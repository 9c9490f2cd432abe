"""Estimated performance while the labels are not there: CBPE on each closed window of predictions.

An SDK aggregator of kind ``prediction``: it keeps the scores of the open
window (at most ``max_rows``; later rows of the window are counted, not kept),
and when the window closes scores it with a ``FittedCBPE`` fitted on a labelled
reference. A binary model's score is ``probabilities[1]`` when probabilities
are given, else ``confidence`` read as P(class 1); its predicted class is
score ≥ ``threshold``. A multiclass model gives ``probabilities``; the
predicted class is the arg max.

>>> import numpy as np
>>> from inferwatch.quality import CBPE
>>> rng = np.random.default_rng(0); p = rng.uniform(size=2000); y = rng.random(2000) < p
>>> agg = EstimatedPerformance(CBPE().fit(y, p > 0.5, p), service="s", window=60.0, min_rows=10)
>>> agg.consume("prediction", [(None, float(v), None) for v in p[:500]], 1.0)
>>> agg.consume("prediction", [], 61.0)
>>> round(agg.last.estimated["accuracy"], 2)
0.75
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch._exceptions import InputError
from inferwatch.model import metrics as catalog
from inferwatch.quality.online import TumblingWindow
from inferwatch.quality.performance._cbpe import CBPE, FittedCBPE, PerformanceEstimate
from inferwatch.quality.performance._labelled import multiclass_sample
from inferwatch.quality.profile import Profile

__all__ = ["EstimatedPerformance", "fit_from_profile", "labelled_reference"]


class EstimatedPerformance:
    """Estimated metrics (with their ±3σ band) of the last closed window, exported on ``/metrics``."""

    kinds: tuple[str, ...] = ("prediction",)

    def __init__(
        self, fitted: FittedCBPE, *, service: str, model: str = "", window: float = 3600.0,
        max_rows: int = 100_000, min_rows: int = 100, threshold: float = 0.5,
    ) -> None:
        self.fitted = fitted
        self.labels = (service, model)
        self.max_rows, self.min_rows, self.threshold = max_rows, min_rows, threshold
        self._window = TumblingWindow(window)
        self._scores: list[Any] = []
        self._lock = threading.Lock()
        self.invalid = 0
        self.last: PerformanceEstimate | None = None
        """The last closed window's estimate (None before one with ``min_rows`` rows closed)."""

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Keep the scores of a batch (unreadable ones are counted and dropped)."""
        with self._lock:
            self._roll(now)
            for p in payloads:
                if len(self._scores) >= self.max_rows:
                    break
                try:
                    self._scores.append(self._score(p))
                except (TypeError, ValueError, IndexError):
                    self.invalid += 1

    def _score(self, payload: Any) -> Any:
        _, confidence, probabilities = payload
        if probabilities is not None:
            probs = np.asarray(probabilities, dtype=np.float64).reshape(-1)
            if probs.size != self.fitted.classes or not np.isfinite(probs).all():
                raise ValueError("probabilities")
            return float(probs[1]) if self.fitted.classes == 2 else probs
        if self.fitted.classes != 2:
            raise ValueError("a multiclass model needs probabilities")
        score = float(confidence)
        if not 0.0 <= score <= 1.0:
            raise ValueError("confidence")
        return score

    def _roll(self, now: float) -> None:
        start = self._window.start
        if not (self._window.advance(now) and start is not None):
            return
        rows, self._scores = self._scores, []
        if len(rows) < self.min_rows:
            return
        scores = np.array(rows, dtype=np.float64)
        pred = (scores >= self.threshold) if scores.ndim == 1 else scores.argmax(axis=1)
        self.last = self.fitted.score(pred.astype(np.float64), scores)

    def collect(self, now: float) -> Iterable[Metric]:
        """Gauges: each metric and bound, the share outside the support, the rows, the reference level."""
        with self._lock:
            self._roll(now)
            last = self.last
        spec, sup = catalog.MODEL_ESTIMATED, catalog.MODEL_ESTIMATE_OUTSIDE_SUPPORT
        est = GaugeMetricFamily(spec.name, spec.help, labels=[*spec.labels])
        out = GaugeMetricFamily(sup.name, sup.help, labels=[*sup.labels])
        if last is not None:
            for bound, values in (("estimate", last.estimated), ("lower", last.lower), ("upper", last.upper)):
                for metric, v in values.items():
                    if np.isfinite(v):
                        est.add_metric([*self.labels, metric, bound], v)
            out.add_metric(list(self.labels), last.outside_support)
        rows, level = catalog.MODEL_ESTIMATED_WINDOW, catalog.MODEL_REFERENCE_PERFORMANCE
        win = GaugeMetricFamily(rows.name, rows.help, labels=[*rows.labels])
        ref = GaugeMetricFamily(level.name, level.help, labels=[*level.labels])
        for metric, v in self.fitted.reference.items():
            if np.isfinite(v):
                ref.add_metric([*self.labels, metric], v)
        if last is not None:
            win.add_metric(list(self.labels), float(last.rows))
        return [est, out, win, ref]

    def __repr__(self) -> str:
        return f"EstimatedPerformance(service={self.labels[0]!r}, model={self.labels[1]!r})"


def labelled_reference(
    table: Mapping[str, Any], score: str, label: str, *, max_rows: int = 20_000, seed: int = 0,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """A profile's labelled sample: scores (P(class 1)) and 0/1 labels, at most ``max_rows`` (seeded).

    ``score`` as ``LABEL=COL,LABEL=COL,...`` (k >= 3 classes): rows of class probabilities and
    class indices in that order (``multiclass_sample``).
    """
    if "=" in score:
        return multiclass_sample(table, score, label, max_rows=max_rows, seed=seed)
    for col in (score, label):
        if col not in table:
            raise InputError(f"no column {col!r} in the reference (columns: {', '.join(table)})")
    try:
        s = np.asarray(table[score], dtype=np.float64)
        y = np.asarray(table[label], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"--score {score!r} and --labels {label!r} must be numeric: {exc}") from exc
    keep = np.isfinite(s) & np.isfinite(y)
    s, y = s[keep], y[keep]
    if s.size < 10:
        raise InputError(f"the reference has {s.size} rows with both {score!r} and {label!r}: 10 at least")
    if np.any((s < 0) | (s > 1)):
        raise InputError(f"column {score!r} must hold P(class 1), in [0, 1]")
    if not np.all((y == 0) | (y == 1)):
        raise InputError(f"column {label!r} must hold the true class, 0 or 1")
    if s.size > max_rows:
        pick = np.sort(np.random.default_rng(seed).choice(s.size, max_rows, replace=False))
        s, y = s[pick], y[pick]
    return s, y


def fit_from_profile(profile: Profile, settings: CBPE | None = None) -> FittedCBPE:
    """Fit the estimator on a profile built with ``--labels`` (predicted: score ≥ 0.5, or the arg max)."""
    if profile.labelled is None:
        raise InputError("the profile has no labelled sample: build it with --labels COL --score COL")
    scores, labels = profile.labelled
    # multiclass: the arg max, and CBPE fits a calibrator per class
    pred = (scores >= 0.5) if scores.ndim == 1 else scores.argmax(axis=1)
    return (settings or CBPE()).fit(labels, pred.astype(np.float64), scores)
