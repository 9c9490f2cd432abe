"""Prediction-confidence monitor: histogram, window mean, low-confidence ratio, entropy, PSI.

:class:`ConfidenceAggregator` consumes the ``prediction`` kind's
``(features, confidence, probabilities)`` payloads. ``confidence`` is a number
in ``[0, 1]`` or a 1-D array of them (a batch); without it the top class
probability is used. ``probabilities`` (one row or a batch of rows, each
summing to about 1) give the entropy ``H = −Σ_k p_k ln p_k`` in nats.

The histogram ``inferwatch_prediction_confidence`` is cumulative (Prometheus
histograms are counters); the gauges describe the last closed window; the
confidence PSI is against the profile's confidence distribution, when it has one.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch.model import metrics as catalog
from inferwatch.quality.drift import DEFAULT_EPSILON, psi_from_counts
from inferwatch.quality.online._sketch import Key, decode, encode, is_sketch
from inferwatch.quality.online._window import TumblingWindow
from inferwatch.quality.profile import FloatArray, NumericProfile

__all__ = ["CONFIDENCE_BUCKETS", "ConfidenceAggregator", "ConfidenceWindow"]

CONFIDENCE_BUCKETS: tuple[float, ...] = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)
"""Upper bounds of the confidence histogram (``+Inf`` is added)."""


_SUMS = ("count", "total", "low", "entropy_count", "entropy_total")


class ConfidenceWindow:
    """Sums of one window: count, confidence sum, low-confidence count, entropy, reference bins."""

    def __init__(self, bins: int) -> None:
        self.count = 0
        self.total = 0.0
        self.low = 0
        self.entropy_count = 0
        self.entropy_total = 0.0
        self.bins = np.zeros(bins, np.int64)

    def values(self) -> dict[Key, float]:
        """The window as sketch values: every one adds across workers."""
        out: dict[Key, float] = {(k,): float(getattr(self, k)) for k in _SUMS}
        out.update({(f"bin{i}",): float(n) for i, n in enumerate(self.bins.tolist()) if n})
        return out

    @classmethod
    def of(cls, bins: int, values: dict[Key, float]) -> ConfidenceWindow:
        """The window a (summed) sketch describes."""
        w = cls(bins)
        w.count, w.low, w.entropy_count = (int(values.get((k,), 0))
                                           for k in ("count", "low", "entropy_count"))
        w.total, w.entropy_total = values.get(("total",), 0.0), values.get(("entropy_total",), 0.0)
        for i in range(bins):
            w.bins[i] = int(values.get((f"bin{i}",), 0))
        return w

    @property
    def mean(self) -> float | None:
        """Mean confidence (None when empty)."""
        return self.total / self.count if self.count else None

    @property
    def entropy(self) -> float | None:
        """Mean entropy in nats (None without probabilities)."""
        return self.entropy_total / self.entropy_count if self.entropy_count else None


class ConfidenceAggregator:
    """Confidence metrics of a model, exported on ``/metrics``.

    >>> agg = ConfidenceAggregator(service="ranker", model="ctr", window=60.0)
    >>> agg.consume("prediction", [(None, 0.9, None), (None, 0.3, None), (None, None, [0.5, 0.5])], 1.0)
    >>> agg.consume("prediction", [], 60.0)
    >>> agg.last.mean, agg.last.low, round(agg.last.entropy, 4)
    (0.5666666666666667, 1, 0.6931)
    """

    kinds: tuple[str, ...] = ("prediction",)

    def __init__(
        self,
        *,
        service: str,
        model: str = "",
        window: float = 3600.0,
        low_confidence: float = 0.5,
        reference: NumericProfile | None = None,
        buckets: Sequence[float] = CONFIDENCE_BUCKETS,
        epsilon: float = DEFAULT_EPSILON,
    ) -> None:
        self.labels = (service, model)
        self.low_confidence = low_confidence
        self.reference = reference
        self.epsilon = epsilon
        self._bounds = np.asarray(buckets, dtype=np.float64)
        self._hist = np.zeros(self._bounds.size + 1, np.int64)
        self._sum = 0.0
        self._window = TumblingWindow(window)
        self._ref_bins = 0 if reference is None else reference.counts.size
        self._open = ConfidenceWindow(self._ref_bins)
        self._lock = threading.Lock()
        self.invalid = 0
        self.last: ConfidenceWindow | None = None
        self._closed_start = 0.0  # start of ``last``
        """The last closed window (None before the first closes)."""

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add a batch of payloads (unreadable confidences are counted and dropped)."""
        with self._lock:
            self._roll(now)
            conf: list[FloatArray] = []
            probs: list[FloatArray] = []
            for p in payloads:
                try:
                    c, pr = _read(p)
                except (TypeError, ValueError, IndexError):
                    self.invalid += 1
                    continue
                if c.size:
                    conf.append(c)
                if pr is not None:
                    probs.append(pr)
            if conf:
                self._add(np.concatenate(conf))
            if probs:
                self._add_entropy(probs)

    def _add(self, c: FloatArray) -> None:
        self._hist += np.bincount(np.searchsorted(self._bounds, c, side="left"), minlength=self._hist.size)
        self._sum += float(c.sum())
        w = self._open
        w.count += c.size
        w.total += float(c.sum())
        w.low += int(np.count_nonzero(c < self.low_confidence))
        if self.reference is not None:
            w.bins += self.reference.bin(c)

    def _add_entropy(self, probs: list[FloatArray]) -> None:
        for p in probs:
            with np.errstate(divide="ignore", invalid="ignore"):
                h = -np.sum(np.where(p > 0, p * np.log(p), 0.0), axis=1)
            self._open.entropy_total += float(h.sum())
            self._open.entropy_count += h.size

    def _roll(self, now: float) -> None:
        start = self._window.start
        if self._window.advance(now) and start is not None:
            self.last, self._open = self._open, ConfidenceWindow(self._ref_bins)
            self._closed_start = start

    def collect(self, now: float) -> Iterable[Metric]:
        """The cumulative histogram and the last closed window's gauges."""
        shared = list(self.share(now))
        return [f for f in shared if not is_sketch(f)] + list(self.merged(shared, now))

    def share(self, now: float) -> Iterable[Metric]:
        """What a worker publishes: the cumulative histogram and its open and last closed windows' sketch."""
        with self._lock:
            self._roll(now)
            hist, total = self._hist.copy(), self._sum
            windows = {} if self.last is None else {self._closed_start: self.last.values()}
            if self._window.start is not None:
                windows[self._window.start] = self._open.values()
        svc, model = self.labels
        spec = catalog.PREDICTION_CONFIDENCE
        h = HistogramMetricFamily(spec.family, spec.help, labels=spec.labels)
        cum = np.cumsum(hist)
        buckets = [(_le(b), float(n)) for b, n in zip(self._bounds.tolist(), cum[:-1].tolist(), strict=True)]
        h.add_metric([svc, model], [*buckets, ("+Inf", float(cum[-1]))], sum_value=total)
        return [h, encode(catalog.CONFIDENCE_SKETCH, svc, model, windows)]

    def merged(self, sketches: Sequence[Metric], now: float) -> Iterable[Metric]:
        """The gauges of the window before ``now``'s, on every worker's sums added up."""
        svc, model = self.labels
        values = decode(sketches, catalog.CONFIDENCE_SKETCH, svc, model, self._window.previous_start(now))
        last = ConfidenceWindow.of(self._ref_bins, values) if values else None
        gauges = {
            catalog.PREDICTION_CONFIDENCE_MEAN: last.mean if last else None,
            catalog.LOW_CONFIDENCE_RATIO: (last.low / last.count) if last and last.count else None,
            catalog.PREDICTION_ENTROPY: last.entropy if last else None,
            catalog.CONFIDENCE_PSI: self._psi(last),
        }
        out: list[Metric] = []
        for s, v in gauges.items():
            g = GaugeMetricFamily(s.family, s.help, labels=s.labels)
            if v is not None:
                g.add_metric([svc, model], v)
            out.append(g)
        return out

    def _psi(self, last: ConfidenceWindow | None) -> float | None:
        if self.reference is None or last is None or last.bins.sum() == 0:
            return None
        return psi_from_counts(self.reference.counts, last.bins, epsilon=self.epsilon)

    def __repr__(self) -> str:
        return f"ConfidenceAggregator(window={self._window.seconds}s)"


def _le(bound: float) -> str:
    return repr(float(bound))


def _read(payload: Any) -> tuple[FloatArray, FloatArray | None]:
    _, confidence, probabilities = payload
    probs = None
    if probabilities is not None:
        probs = np.asarray(probabilities, dtype=np.float64)
        probs = probs.reshape(1, -1) if probs.ndim == 1 else probs
        if probs.ndim != 2 or not np.isfinite(probs).all() or (probs < 0).any():
            raise ValueError("probabilities must be rows of non-negative numbers")
    if confidence is None:
        conf = probs.max(axis=1) if probs is not None else np.empty(0)
    else:
        conf = np.atleast_1d(np.asarray(confidence, dtype=np.float64)).ravel()
    if not np.isfinite(conf).all() or (conf < 0).any() or (conf > 1).any():
        raise ValueError("confidence must be in [0, 1]")
    return conf, probs
