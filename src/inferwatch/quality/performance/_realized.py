"""Realized performance from delayed labels: predictions joined to their labels by request id.

The SDK hands over ``(request_id, confidence, probabilities)`` for each
prediction made with ``monitor.observe_prediction(..., request_id=...)`` and
``(request_id, label)`` for each ``monitor.observe_label(request_id, label)``,
hours or days later. Predictions wait in a bounded store (oldest evicted first,
and dropped after ``max_age`` seconds: counted as ``expired``); a label joins
its prediction and the pair enters a window of the last ``window`` labelled
predictions, on which the metrics are computed at exposition time.

Binary models give ``confidence`` = P(class 1) (predicted class: ≥ ``threshold``);
multiclass models give ``probabilities`` (predicted class: the arg max). Labels
are class indices (``1``, ``True``, ``1.0``, ``"1"``); any other label (``0.7``,
``"cat"``) is counted as ``invalid`` and its prediction keeps waiting.

>>> agg = RealizedPerformance(service="s", model="m", window=4)
>>> agg.consume("prediction_id", [("a", 0.9, None), ("b", 0.2, None), ("c", 0.7, None)], 0.0)
>>> agg.consume("label", [("a", 1), ("b", 1), ("zz", 0)], 3600.0)
>>> agg.metrics()["accuracy"], agg.pending, agg.counts["unmatched"]
(0.5, 1, 1)
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict, deque
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch.model import metrics as catalog
from inferwatch.quality.performance._perf_metrics import binary_metrics, multiclass_metrics

__all__ = ["LABEL", "PREDICTION_ID", "REALIZED_METRICS", "RealizedPerformance"]

PREDICTION_ID = "prediction_id"
LABEL = "label"
REALIZED_METRICS = ("accuracy", "precision", "recall", "f1", "roc_auc", "log_loss", "ece")
_MULTI = ("accuracy", "precision", "recall", "f1", "roc_auc")


class RealizedPerformance:
    """An SDK aggregator: realized classifier metrics over the last ``window`` labelled predictions."""

    kinds: tuple[str, ...] = (PREDICTION_ID, LABEL)

    def __init__(
        self, *, service: str, model: str = "", window: int = 1000, max_pending: int = 100_000,
        max_age: float = 7 * 86400.0, threshold: float = 0.5,
    ) -> None:
        if window < 1 or max_pending < 1 or max_age <= 0:
            raise ValueError("window, max_pending and max_age must be positive")
        self.labels = (service, model)
        self.threshold = threshold
        self.max_pending = max_pending
        self.max_age = max_age
        self._pending: OrderedDict[str, tuple[float, int, Any]] = OrderedDict()
        self._window: deque[tuple[int, int, Any]] = deque(maxlen=window)
        self.counts = {"joined": 0, "unmatched": 0, "expired": 0, "invalid": 0}
        self._lock = threading.Lock()

    @property
    def pending(self) -> int:
        """Predictions still waiting for their label."""
        return len(self._pending)

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Store predictions or join labels (unreadable payloads are counted, never raised)."""
        with self._lock:
            self._expire(now)  # a label arriving after its prediction's max_age finds it gone (unmatched)
            for p in payloads:
                try:
                    self._prediction(p, now) if kind == PREDICTION_ID else self._label(p)
                except (TypeError, ValueError, IndexError):
                    self.counts["invalid"] += 1
            self._expire(now)

    def _prediction(self, payload: Any, now: float) -> None:
        request_id, confidence, probabilities = payload
        if probabilities is not None:
            probs = np.asarray(probabilities, dtype=np.float64).reshape(-1)
            if probs.size < 2 or not np.all(np.isfinite(probs)):
                raise ValueError("probabilities")
            score: Any = probs
            pred = int(np.argmax(probs))
        else:
            score = float(confidence)
            if not 0.0 <= score <= 1.0:
                raise ValueError("confidence")
            pred = int(score >= self.threshold)
        self._pending[str(request_id)] = (now, pred, score)
        self._pending.move_to_end(str(request_id))
        while len(self._pending) > self.max_pending:
            self._pending.popitem(last=False)
            self.counts["expired"] += 1

    def _label(self, payload: Any) -> None:
        request_id, label = payload
        y = _class_index(label)
        found = self._pending.pop(str(request_id), None)
        if found is None:
            self.counts["unmatched"] += 1
            return
        self._window.append((y, found[1], found[2]))
        self.counts["joined"] += 1

    def _expire(self, now: float) -> None:
        while self._pending:
            t = next(iter(self._pending.values()))[0]
            if now - t <= self.max_age:
                break
            self._pending.popitem(last=False)
            self.counts["expired"] += 1

    def metrics(self) -> dict[str, float]:
        """The realized metrics of the window (NaN where undefined or the window is empty)."""
        with self._lock:
            rows = list(self._window)
        if not rows:
            return dict.fromkeys(REALIZED_METRICS, math.nan)
        y = np.array([r[0] for r in rows], dtype=np.float64)
        pred = np.array([r[1] for r in rows], dtype=np.float64)
        if isinstance(rows[0][2], np.ndarray):
            k = max(r[2].size for r in rows)
            scores = np.array([np.pad(r[2], (0, k - r[2].size)) for r in rows])
            return multiclass_metrics(y, pred, scores, _MULTI)
        score = np.array([r[2] for r in rows], dtype=np.float64)
        return binary_metrics(y, pred, score, REALIZED_METRICS)

    def collect(self, now: float) -> Iterable[Metric]:
        """The realized metrics, window size, pending labels and label counts."""
        with self._lock:
            self._expire(now)
            pending, size, counts = len(self._pending), len(self._window), dict(self.counts)
        perf = GaugeMetricFamily(catalog.MODEL_REALIZED.name, catalog.MODEL_REALIZED.help,
                                 labels=[*catalog.MODEL_REALIZED.labels])
        for name, value in self.metrics().items():
            if math.isfinite(value):
                perf.add_metric([*self.labels, name], value)
        win = GaugeMetricFamily(catalog.MODEL_LABELLED_WINDOW.name, catalog.MODEL_LABELLED_WINDOW.help,
                                labels=[*catalog.MODEL_LABELLED_WINDOW.labels])
        win.add_metric(list(self.labels), size)
        wait = GaugeMetricFamily(catalog.MODEL_UNLABELLED_RATIO.name, catalog.MODEL_UNLABELLED_RATIO.help,
                                 labels=[*catalog.MODEL_UNLABELLED_RATIO.labels])
        wait.add_metric(list(self.labels), pending / (pending + size) if pending + size else 0.0)
        spec = catalog.MODEL_LABELS_TOTAL
        total = CounterMetricFamily(spec.family, spec.help, labels=[*spec.labels])
        for outcome, n in counts.items():
            total.add_metric([*self.labels, outcome], n)
        return [perf, win, wait, total]

    def __repr__(self) -> str:
        return f"RealizedPerformance(service={self.labels[0]!r}, model={self.labels[1]!r})"


def _class_index(label: Any) -> int:
    """``label`` as a class index; ``ValueError`` for a number that is not a whole one (0.7, inf, NaN)."""
    if isinstance(label, float | np.floating) and not float(label).is_integer():
        raise ValueError("label")  # int() would truncate 0.7 to class 0 without a word (and raise on inf)
    return int(label)
