"""Streaming embedding drift: a bounded reservoir per window, scored against a reference sample.

:class:`EmbeddingDriftAggregator` implements the SDK's ``Aggregator`` protocol
for the ``embedding`` kind (``monitor.observe_embedding(name, vector)``). Each
named embedding keeps, for the open window, a uniform reservoir sample of at
most ``sample_size`` vectors (Vitter's algorithm R): memory is
``sample_size × dim`` float64 per name, fixed whatever the traffic (1000 × 384
is 3 MB). When the window closes, the reservoir is scored against the
reference's sample (:func:`embedding_drift`: MMD² with its permutation critical
value, the domain classifier's AUC) on the SDK's background thread.

Evidence rule (as PSI's ``min_samples``): a window with fewer than
``min_samples`` embeddings publishes its size and nothing else, so a quiet
hour's handful of vectors can neither page nor hide behind a score.

Worker processes do not merge: each scores its own reservoir (a uniform sample
of its share of traffic, which is a uniform sample of the whole when the load
balancer is not biased).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.metrics_core import Metric

from inferwatch._exceptions import InputError
from inferwatch.model import metrics as catalog
from inferwatch.quality.embedding._embedding import (
    DEFAULT_AUC_THRESHOLD,
    EmbeddingDrift,
    FloatArray,
    as_matrix,
    embedding_drift,
)
from inferwatch.quality.online import TumblingWindow

__all__ = ["EMBEDDING", "MIN_EMBEDDING_SAMPLES", "EmbeddingDriftAggregator", "Reservoir"]

EMBEDDING = "embedding"
"""The observation kind: payloads are ``(name, vector)``."""
MIN_EMBEDDING_SAMPLES = 200
"""Embeddings a window needs before its drift is published (see the evidence rule above)."""


class Reservoir:
    """A uniform sample of at most ``size`` vectors of one window (algorithm R).

    >>> r = Reservoir(3, dim=2, seed=0)
    >>> for i in range(10):
    ...     r.add(np.full(2, float(i)))
    >>> r.seen, r.sample().shape
    (10, (3, 2))
    """

    def __init__(self, size: int, dim: int, seed: int = 0) -> None:
        self.rows = np.empty((size, dim))
        self.seen = 0
        self._rng = np.random.default_rng(seed)

    def add(self, vector: FloatArray) -> None:
        """Offer one vector: kept with probability ``size / seen``."""
        size = self.rows.shape[0]
        if self.seen < size:
            self.rows[self.seen] = vector
        else:
            j = int(self._rng.integers(0, self.seen + 1))
            if j < size:
                self.rows[j] = vector
        self.seen += 1

    def sample(self) -> FloatArray:
        """The vectors kept (a view; at most ``size`` rows)."""
        return self.rows[: min(self.seen, self.rows.shape[0])]


class EmbeddingDriftAggregator:
    """Embedding drift per window and named embedding, exported on ``/metrics``.

    >>> rng = np.random.default_rng(0)
    >>> agg = EmbeddingDriftAggregator({"query": rng.normal(size=(300, 8))}, service="search",
    ...                                window=60.0, min_samples=100)
    >>> agg.consume("embedding", [("query", v) for v in rng.normal(1.0, 1.0, (300, 8))], now=1.0)
    >>> agg.consume("embedding", [], now=61.0)  # the window [0, 60) closes
    >>> agg.last["query"].mmd_drift, agg.last["query"].classifier_drift
    (True, True)
    """

    kinds: tuple[str, ...] = (EMBEDDING,)

    def __init__(
        self,
        references: Mapping[str, Any],
        *,
        service: str,
        model: str = "",
        window: float = 3600.0,
        sample_size: int = 1000,
        min_samples: int = MIN_EMBEDDING_SAMPLES,
        alpha: float = 0.05,
        auc_threshold: float = DEFAULT_AUC_THRESHOLD,
        permutations: int = 200,
        seed: int = 0,
    ) -> None:
        if not references:
            raise InputError("EmbeddingDriftAggregator: give at least one named reference sample")
        if sample_size < 10 or min_samples < 2:
            raise InputError(f"need sample_size >= 10 and min_samples >= 2, got {sample_size}, {min_samples}")
        rng = np.random.default_rng(seed)
        self.references: dict[str, FloatArray] = {}
        for name, ref in references.items():
            arr = as_matrix(ref, f"reference {name!r}")
            if arr.shape[0] > sample_size:  # the test's cost is fixed by the samples, not the data
                arr = arr[rng.choice(arr.shape[0], sample_size, replace=False)]
            self.references[name] = arr
        self.labels = (service, model)
        self.sample_size, self.min_samples, self.seed = sample_size, min_samples, seed
        self._test = {"alpha": alpha, "auc_threshold": auc_threshold, "permutations": permutations}
        self._window = TumblingWindow(window)
        self._open = self._reservoirs()
        self._lock = threading.Lock()
        self.invalid = 0
        self.last: dict[str, EmbeddingDrift] = {}
        """The last closed window's drift per embedding (only those that met ``min_samples``)."""
        self.last_samples: dict[str, int] = {}
        """Embeddings seen per name in the last closed window."""

    def _reservoirs(self) -> dict[str, Reservoir]:
        return {n: Reservoir(self.sample_size, r.shape[1], self.seed) for n, r in self.references.items()}

    # --- background thread ------------------------------------------------------------------
    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add a batch of ``(name, vector)`` payloads to the open window (bad ones are counted)."""
        with self._lock:
            self._roll(now)
            for payload in payloads:
                if not self._add(payload):
                    self.invalid += 1

    def _add(self, payload: Any) -> bool:
        try:
            name, vector = payload
            reservoir = self._open[name]
            v = np.asarray(vector, dtype=np.float64).reshape(-1)
        except (TypeError, ValueError, KeyError):
            return False
        if v.size != reservoir.rows.shape[1] or not np.isfinite(v).all():
            return False
        reservoir.add(v)
        return True

    def _roll(self, now: float) -> None:
        if self._window.advance(now):
            closed, self._open = self._open, self._reservoirs()
            self.last_samples = {n: r.seen for n, r in closed.items()}
            self.last = {n: self._score(n, r) for n, r in closed.items() if r.seen >= self.min_samples}

    def _score(self, name: str, reservoir: Reservoir) -> EmbeddingDrift:
        t = self._test
        return embedding_drift(self.references[name], reservoir.sample(), alpha=float(t["alpha"]),
                               auc_threshold=float(t["auc_threshold"]),
                               permutations=int(t["permutations"]), seed=self.seed)

    @property
    def window_bytes(self) -> int:
        """Bytes of the open window's reservoirs (fixed by ``sample_size`` and the dimensions)."""
        return sum(r.rows.nbytes for r in self._open.values())

    # --- exposition -------------------------------------------------------------------------
    def collect(self, now: float) -> Iterable[Metric]:
        """MMD², its critical value, the classifier's AUC and its critical value, window sizes."""
        with self._lock:
            self._roll(now)
            last, samples, invalid = dict(self.last), dict(self.last_samples), self.invalid
        svc, model = self.labels
        fams = {spec: GaugeMetricFamily(spec.family, spec.help, labels=spec.labels) for spec in (
            catalog.EMBEDDING_DRIFT_MMD, catalog.EMBEDDING_DRIFT_MMD_CRITICAL,
            catalog.EMBEDDING_DRIFT_AUC, catalog.EMBEDDING_DRIFT_AUC_CRITICAL)}
        for name, d in last.items():
            labels = [svc, model, name]
            fams[catalog.EMBEDDING_DRIFT_MMD].add_metric(labels, d.mmd2)
            fams[catalog.EMBEDDING_DRIFT_MMD_CRITICAL].add_metric(labels, d.mmd2_critical)
            fams[catalog.EMBEDDING_DRIFT_AUC].add_metric(labels, d.auc)
            fams[catalog.EMBEDDING_DRIFT_AUC_CRITICAL].add_metric(labels, d.auc_critical)
        size = catalog.EMBEDDING_WINDOW_SAMPLES
        rows = GaugeMetricFamily(size.family, size.help, labels=size.labels)
        for name, n in samples.items():
            rows.add_metric([svc, model, name], float(n))
        spec = catalog.EMBEDDING_INVALID_TOTAL
        bad = CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
        bad.add_metric([svc, model], float(invalid))
        return [*fams.values(), rows, bad]

    def __repr__(self) -> str:
        return f"EmbeddingDriftAggregator({sorted(self.references)}, window={self._window.seconds}s)"
