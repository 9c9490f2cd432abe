"""Generation quality: evaluation scores, user feedback and flags, as series the default rules watch.

``record_score`` and ``record_feedback`` enqueue one tuple each; ``g.flag(...)``
on a tracked generation does the same. Labels come from the call, or from the
generation the ``generation_id`` names: the monitor keeps the labels of its
most recent generation ids (a bounded LRU, ``GenerationIds``), so feedback
arriving hours later is counted under the model and prompt version that
produced the answer. An id it no longer (or never) knew is counted under the
label value ``unknown``, never raised.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any, NamedTuple

from inferwatch.model import metrics as _metrics
from inferwatch.sdk._requests import MAX_ROUTES, OTHER_ROUTE

__all__ = [
    "FEEDBACK",
    "FLAG",
    "FLAGS",
    "SCORE",
    "SCORE_BUCKETS",
    "GenerationIds",
    "GenerationLabels",
    "QualityAggregates",
]

SCORE = "generation_score"
"""Observation kind: ``(GenerationLabels, name, value)`` or ``(..., generation_id, trace_id)``: the id
(and trace) becomes the exemplar of the bucket the score fell in (``inferwatch generations worst``)."""
FEEDBACK = "generation_feedback"
"""Observation kind: ``(GenerationLabels, sentiment)``."""
FLAG = "generation_flag"
"""Observation kind: ``(GenerationLabels, flag, detail)``."""

FLAGS = ("refused", "guardrail", "schema_invalid", "truncated")
"""The flags a generation may carry (anything else is rejected and counted as invalid)."""

SCORE_BUCKETS = _metrics.SCORE_BUCKETS
"""0-1 judge scores in tenths, then rubric grades up to 10 (the server's OTLP evaluations use them too)."""

UNKNOWN = "unknown"
"""Label value of feedback whose generation id is not (or no longer) known."""

MAX_IDS = 100_000
"""Generation ids remembered for joining late feedback (the oldest are forgotten first)."""

MAX_DETAILS = 16
"""Distinct flag details kept per flag; later ones share ``<other>`` (bounded cardinality)."""


class GenerationLabels(NamedTuple):
    """The labels a generation's quality series carry (empty ``version``: the monitor's)."""

    route: str
    model: str
    version: str
    prompt_version: str
    tenant: str


UNKNOWN_LABELS = GenerationLabels(UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN, UNKNOWN)


class GenerationIds:
    """A bounded LRU of generation id -> its labels and trace id (thread-safe; one short lock)."""

    def __init__(self, capacity: int = MAX_IDS) -> None:
        self._ids: OrderedDict[str, tuple[GenerationLabels, str]] = OrderedDict()
        self._cap = capacity
        self._lock = threading.Lock()

    def remember(self, generation_id: str, labels: GenerationLabels, trace_id: str = "") -> None:
        """Keep ``labels`` (and the trace it ran in) for ``generation_id`` (the oldest id goes when full)."""
        with self._lock:
            self._ids[generation_id] = (labels, trace_id)
            self._ids.move_to_end(generation_id)
            if len(self._ids) > self._cap:
                self._ids.popitem(last=False)

    def get(self, generation_id: str) -> GenerationLabels | None:
        """The labels of ``generation_id``, or None when it is not (or no longer) known."""
        with self._lock:
            found = self._ids.get(generation_id)
        return None if found is None else found[0]

    def trace(self, generation_id: str) -> str:
        """The trace id ``generation_id`` ran in (``""``: not traced, or not known)."""
        with self._lock:
            found = self._ids.get(generation_id)
        return "" if found is None else found[1]

    def __len__(self) -> int:
        return len(self._ids)


def sentiment(positive: Any, rating: Any, scale: float) -> str | None:
    """``positive``/``negative``/``neutral`` from a thumb or a rating on ``scale``; None: invalid."""
    if positive is not None:
        return ("positive" if positive else "negative") if isinstance(positive, bool) else None
    if not _number(rating) or not 0.0 <= rating <= scale:
        return None
    share = rating / scale
    return "positive" if share > 0.6 else "negative" if share < 0.4 else "neutral"


def _number(value: Any) -> bool:
    return isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(value)


def _labels_ok(labels: Any) -> bool:
    return isinstance(labels, GenerationLabels) and all(isinstance(v, str) and len(v) <= 128 for v in labels)


@dataclass
class _Hist:
    buckets: list[int] = field(default_factory=lambda: [0] * (len(SCORE_BUCKETS) + 1))
    sum: float = 0.0
    count: int = 0
    exemplars: dict[int, tuple[dict[str, str], float, float]] = field(default_factory=dict)
    """The latest scored generation per bucket: (its id and trace id, the score, when)."""


@dataclass
class QualityAggregates:
    """The scores, feedback and flags of one monitor; ``reject(kind)`` counts an invalid observation."""

    service: str
    version: str
    reject: Callable[[str], None]
    kinds: tuple[str, ...] = (SCORE, FEEDBACK, FLAG)
    scores: dict[tuple[GenerationLabels, str], _Hist] = field(default_factory=dict)
    feedback: dict[tuple[GenerationLabels, str], int] = field(default_factory=dict)
    flags: dict[tuple[GenerationLabels, str, str], int] = field(default_factory=dict)
    _details: dict[str, set[str]] = field(default_factory=dict)

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Add scores ``(labels, name, value[, generation_id, trace_id])``, feedback ``(labels, sentiment)``,
        flags ``(labels, flag, detail)``; invalid ones are counted under their kind."""
        for item in payloads:
            ok = isinstance(item, tuple) and item and _labels_ok(item[0])
            if not ok or not self._add(kind, item, now):
                self.reject(kind)

    def _add(self, kind: str, item: tuple[Any, ...], now: float = 0.0) -> bool:
        if kind == SCORE and len(item) in (3, 5) and isinstance(item[1], str) and 0 < len(item[1]) <= 64 \
                and _number(item[2]):
            labels, name, value = item[:3]
            h = self.scores.setdefault(self._bounded(labels, self.scores, name), _Hist())
            i = _bucket(float(value))
            h.buckets[i] += 1
            h.sum += float(value)
            h.count += 1
            if len(item) == 5 and item[3] and isinstance(item[3], str):
                ex = _exemplar_labels(item[3], item[4] if isinstance(item[4], str) else "")
                if ex is not None:
                    h.exemplars[i] = (ex, float(value), now)
            return True
        if kind == FEEDBACK and len(item) == 2 and item[1] in ("positive", "negative", "neutral"):
            key = self._bounded(item[0], self.feedback, item[1])
            self.feedback[key] = self.feedback.get(key, 0) + 1
            return True
        if kind == FLAG and len(item) == 3 and item[1] in FLAGS and isinstance(item[2], str):
            labels, flag, detail = item
            seen = self._details.setdefault(flag, set())
            if detail not in seen and len(seen) >= MAX_DETAILS:
                detail = OTHER_ROUTE
            seen.add(detail)
            fkey = self._bounded(labels, self.flags, flag, detail)
            self.flags[fkey] = self.flags.get(fkey, 0) + 1
            return True
        return False

    def _bounded(self, labels: GenerationLabels, table: dict[Any, Any], *rest: str) -> Any:
        key = (labels, *rest)
        if key not in table and len(table) >= MAX_ROUTES * 4:  # bounded cardinality: the rest share one
            key = (GenerationLabels(OTHER_ROUTE, OTHER_ROUTE, OTHER_ROUTE, OTHER_ROUTE, OTHER_ROUTE), *rest)
        return key

    def _base(self, labels: GenerationLabels) -> list[str]:
        return [self.service, labels.model, labels.version or self.version, labels.route,
                labels.prompt_version, labels.tenant or "default"]

    def collect(self, now: float) -> Iterable[Any]:
        """The score histograms, feedback and flag counters (families with no samples left out)."""
        from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily

        from inferwatch.model import metrics as c

        score = HistogramMetricFamily(c.GENERATION_SCORE.name, c.GENERATION_SCORE.help,
                                      labels=c.GENERATION_SCORE.labels)
        les = [*(repr(b) for b in SCORE_BUCKETS), "+Inf"]
        from prometheus_client.samples import Exemplar

        for (labels, name), h in sorted(self.scores.items()):
            cumulative: list[Any] = []
            total = 0
            for i, (le, n) in enumerate(zip(les, h.buckets, strict=True)):
                total += n
                ex = h.exemplars.get(i)
                cumulative.append((le, total) if ex is None else (le, total, Exemplar(*ex)))
            score.add_metric([*self._base(labels), name], cumulative, h.sum)
        families: list[Any] = [score]
        tables: tuple[tuple[Any, dict[Any, int]], ...] = (
            (c.GENERATION_FEEDBACK_TOTAL, self.feedback), (c.GENERATION_FLAGS_TOTAL, self.flags))
        for spec, table in tables:
            counter = CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
            for (labels, *rest), n in sorted(table.items()):
                counter.add_metric([*self._base(labels), *rest], n)
            families.append(counter)
        return [f for f in families if f.samples]


def _exemplar_labels(generation_id: str, trace_id: str) -> dict[str, str] | None:
    """``{generation_id, trace_id}`` within OpenMetrics' 128 characters (the trace id left out first)."""
    labels = {"generation_id": generation_id, **({"trace_id": trace_id} if trace_id else {})}
    while sum(len(k) + len(v) for k, v in labels.items()) > 128:
        if "trace_id" not in labels:
            return None
        del labels["trace_id"]
    return labels


def _bucket(value: float) -> int:
    from bisect import bisect_left

    return bisect_left(SCORE_BUCKETS, value)
