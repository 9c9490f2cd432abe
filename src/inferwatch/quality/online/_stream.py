"""Streaming drift: per-window bin counts per feature, PSI each window, anomalous-sample ratio.

:class:`DriftAggregator` implements the SDK's ``Aggregator`` protocol for the
``prediction`` kind. Memory per numeric feature: the open window's
``bins + 1`` int64 (counts and a missing counter, 88 B at 10 bins), plus the
profile's cuts and reference counts (240 B in all at 10 bins); per categorical
feature one count per reference category plus the unseen bucket. Nothing grows
with traffic.

At the end of each tumbling window (``quality.window``, 1 h by default, on the
time the SDK passes in) the counts are scored against the profile and the
window's values replace the exposed ones; an empty window exposes no PSI
(the series go absent) and ``inferwatch_drift_window_samples`` 0.

Evidence rule: a window with fewer than ``min_samples`` rows (default
:data:`MIN_WINDOW_SAMPLES`) publishes its size but no PSI, critical value or
anomalous ratio. Under no drift ``PSI / (1/N + 1/M)`` is about chi-square with
``B − 1`` degrees of freedom, so at M = 1000 rows and 10 bins the 99.9th
percentile of a PSI from noise is 0.028 (simulated; chi-square says 0.031):
under a third of the 0.1 warning threshold. A 14-row window reaches 1.87 by
chance, which is how a feature that never moved asked for a rollback.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch._exceptions import InputError
from inferwatch.model import metrics as catalog
from inferwatch.quality.drift import DriftDetector, FeatureDrift, FittedDrift
from inferwatch.quality.online._anomaly import FittedAnomaly, SupportDetector
from inferwatch.quality.online._rows import Block, Layout
from inferwatch.quality.online._sketch import Key, decode, encode, is_sketch
from inferwatch.quality.online._window import TumblingWindow
from inferwatch.quality.profile import CategoricalProfile, IntArray, NumericProfile, Profile

__all__ = ["MIN_WINDOW_SAMPLES", "DriftAggregator", "WindowDrift"]

MIN_WINDOW_SAMPLES = 1000
"""Rows a window needs before its PSI is published (``quality.min_window_samples``; see above)."""


class WindowDrift:
    """The scored result of one closed window."""

    def __init__(self, start: float, rows: int, anomalous: int, features: dict[str, FeatureDrift]) -> None:
        self.start, self.rows, self.anomalous, self.features = start, rows, anomalous, features

    @property
    def anomalous_ratio(self) -> float | None:
        """Anomalous rows over rows (None for an empty window)."""
        return self.anomalous / self.rows if self.rows else None


class _Counts:
    """Bin counts of the open window: one int64 vector per feature."""

    def __init__(self, profile: Profile) -> None:
        self.bins: list[IntArray] = [np.zeros(f.counts.size + (isinstance(f, CategoricalProfile)), np.int64)
                                     for f in profile.features]
        self.missing = np.zeros(len(profile.features), np.int64)
        self.rows = 0
        self.anomalous = 0

    def values(self, profile: Profile) -> dict[Key, float]:
        """The window as sketch values keyed by (feature, bin): every one adds across workers."""
        out: dict[Key, float] = {("", "rows"): self.rows, ("", "anomalous"): self.anomalous}
        for i, f in enumerate(profile.features):
            out.update({(f.name, str(b)): float(n) for b, n in enumerate(self.bins[i].tolist()) if n})
            if self.missing[i]:
                out[f.name, "missing"] = float(self.missing[i])
        return out

    @classmethod
    def of(cls, profile: Profile, values: dict[Key, float]) -> _Counts:
        """The counts a (summed) sketch describes; keys it does not know are ignored."""
        c = cls(profile)
        c.rows, c.anomalous = int(values.get(("", "rows"), 0)), int(values.get(("", "anomalous"), 0))
        index = {f.name: i for i, f in enumerate(profile.features)}
        for (name, b), n in values.items():
            i = index.get(name)
            if i is None:
                continue
            if b == "missing":
                c.missing[i] = int(n)
            elif b.isdigit() and int(b) < c.bins[i].size:
                c.bins[i][int(b)] = int(n)
        return c


class DriftAggregator:
    """Feature drift and anomalous samples per window, exported on ``/metrics``.

    >>> from inferwatch.quality import build_profile
    >>> profile = build_profile({"x": np.arange(1000.0)})
    >>> agg = DriftAggregator(profile, service="ranker", model="ctr", window=60.0)
    >>> agg.consume("prediction", [({"x": v}, None, None) for v in range(500, 1500)], now=10.0)
    >>> agg.consume("prediction", [], now=61.0)  # the window [0, 60) closes
    >>> round(agg.last.features["x"].psi, 2), agg.last.anomalous_ratio
    (4.35, 0.5)
    """

    kinds: tuple[str, ...] = ("prediction",)

    def __init__(
        self,
        profile: Profile,
        *,
        service: str,
        model: str = "",
        window: float = 3600.0,
        detector: DriftDetector | None = None,
        anomaly: FittedAnomaly | None = None,
        min_samples: int = MIN_WINDOW_SAMPLES,
    ) -> None:
        if min_samples < 1:
            raise InputError(f"min_samples must be at least 1, got {min_samples}")
        self.min_samples = min_samples
        self.profile = profile
        self.labels = (service, model)
        binned = detector or DriftDetector(statistics=frozenset({"psi", "js"}))
        self._fitted = FittedDrift(binned, profile, {})
        self._anomaly = anomaly if anomaly is not None else SupportDetector().fit(profile)
        self._layout = Layout(profile)
        self._num = [(i, f) for i, f in enumerate(profile.features) if isinstance(f, NumericProfile)]
        self._cat = [(i, f) for i, f in enumerate(profile.features) if isinstance(f, CategoricalProfile)]
        self._window = TumblingWindow(window)
        self._counts = _Counts(profile)
        self._closed: tuple[float, _Counts] | None = None  # the last closed window, shared with the others
        self._lock = threading.Lock()
        self.invalid = 0
        self.last: WindowDrift | None = None
        """The last closed window's result (None before the first closes)."""

    # --- background thread ------------------------------------------------------------------
    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add a batch of ``(features, confidence, probabilities)`` payloads to the open window."""
        with self._lock:
            self._roll(now)
            if not payloads:
                return
            block = self._layout.block([p[0] if isinstance(p, tuple) and p else p for p in payloads])
            self.invalid += block.invalid
            if block.rows:
                self._add(block)

    def _add(self, block: Block) -> None:
        c = self._counts
        for j, (i, f) in enumerate(self._num):
            col = block.numeric[:, j]
            ok = ~np.isnan(col)
            vals = col[ok] if not ok.all() else col
            c.bins[i] += np.bincount(np.searchsorted(f.cuts, vals, side="right"), minlength=c.bins[i].size)
            c.missing[i] += col.size - vals.size
        for j, (i, cf) in enumerate(self._cat):
            cats = block.categorical[j]
            c.bins[i] += cf.bin(cats)
            c.missing[i] += sum(v is None for v in cats)
        c.rows += block.rows
        c.anomalous += int(self._anomaly.flags(block.numeric, block.categorical).sum())

    def _roll(self, now: float) -> None:
        start = self._window.start
        if self._window.advance(now) and start is not None:
            self.last = self._score(start, self._counts)
            self._closed = (start, self._counts)
            self._counts = _Counts(self.profile)

    def _score(self, start: float, c: _Counts) -> WindowDrift:
        scores = {}
        for i, f in enumerate(self.profile.features):
            if c.bins[i].sum() > 0:
                scores[f.name] = self._fitted.score_counts(f, c.bins[i], missing=int(c.missing[i]))
        return WindowDrift(start, c.rows, c.anomalous, scores)

    @property
    def window_bytes(self) -> int:
        """Bytes of the open window's counters (fixed by the bins, not by traffic)."""
        return sum(b.nbytes for b in self._counts.bins) + self._counts.missing.nbytes

    # --- exposition -------------------------------------------------------------------------
    def collect(self, now: float) -> Iterable[Metric]:
        """PSI, its critical value, the anomalous ratio and window size of the last closed window."""
        shared = list(self.share(now))
        return [f for f in shared if not is_sketch(f)] + list(self.merged(shared, now))

    def share(self, now: float) -> Iterable[Metric]:
        """What a worker publishes: the invalid counter and its open and last closed windows' sketch."""
        with self._lock:
            self._roll(now)
            windows = {} if self._closed is None else {self._closed[0]: self._closed[1].values(self.profile)}
            if self._window.start is not None:
                windows[self._window.start] = self._counts.values(self.profile)
            invalid = self.invalid
        svc, model = self.labels
        spec = catalog.QUALITY_INVALID_TOTAL
        bad = CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
        bad.add_metric([svc, model], float(invalid))
        return [bad, encode(catalog.DRIFT_SKETCH, svc, model, windows)]

    def merged(self, sketches: Sequence[Metric], now: float) -> Iterable[Metric]:
        """The gauges of the window before ``now``'s, scored once on every worker's counts added up."""
        svc, model = self.labels
        start = self._window.previous_start(now)
        summed = decode(sketches, catalog.DRIFT_SKETCH, svc, model, start)
        last = self._score(start, _Counts.of(self.profile, summed))
        psi = _gauge(catalog.FEATURE_PSI)
        crit = _gauge(catalog.FEATURE_PSI_CRITICAL)
        anomalous = _gauge(catalog.ANOMALOUS_SAMPLES_RATIO)
        rows = _gauge(catalog.DRIFT_WINDOW_SAMPLES)
        if last.rows >= self.min_samples:  # the evidence rule: below it, only the size
            for name, s in last.features.items():
                psi.add_metric([svc, model, name], s.psi)
                crit.add_metric([svc, model, name], s.psi_critical)
            if last.anomalous_ratio is not None:
                anomalous.add_metric([svc, model], last.anomalous_ratio)
        rows.add_metric([svc, model], float(last.rows))
        return [psi, crit, anomalous, rows]

    def __repr__(self) -> str:
        return f"DriftAggregator({len(self.profile.features)} features, window={self._window.seconds}s)"


def _gauge(spec: catalog.MetricSpec) -> GaugeMetricFamily:
    return GaugeMetricFamily(spec.family, spec.help, labels=spec.labels)
