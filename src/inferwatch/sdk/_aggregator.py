"""The contract between the SDK's background thread and the aggregators it feeds.

The request thread only enqueues ``(kind, payload)``; the one background thread
hands each batch of payloads of a kind to the aggregators attached for that
kind, and asks every aggregator for its metric families at exposition time.
Packages below the SDK in the table (``quality``, ``business``) implement this
protocol; the SDK never imports them.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from inferwatch.model import metrics as catalog

if TYPE_CHECKING:
    from prometheus_client.metrics_core import Metric

__all__ = ["Aggregator", "Mergeable", "merge_sketches"]

log = logging.getLogger("inferwatch.sdk")


@runtime_checkable
class Aggregator(Protocol):
    """Consumes observations of some kinds on the background thread; exposes metrics."""

    kinds: tuple[str, ...]
    """The observation kinds it consumes, e.g. ``("prediction",)`` or ``("outcome",)``."""

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        """Aggregate a batch (background thread only; must not raise)."""
        ...

    def collect(self, now: float) -> Iterable[Metric]:
        """Metric families for exposition (called under the monitor's lock)."""
        ...


@runtime_checkable
class Mergeable(Protocol):
    """An aggregator whose windows add across worker processes (drift, confidence).

    Under a multiprocess directory each worker publishes ``share(now)`` instead of
    ``collect(now)``: counters and histograms (which the store sums) plus *sketch*
    families (names under ``SKETCH_PREFIX``: window sums, one row per worker). A
    scrape hands every worker's sketches to ``merged``, which computes the gauges
    once on their sum; sketches themselves are never exposed.
    """

    def share(self, now: float) -> Iterable[Metric]:
        """What this worker publishes: summable families and its sketches."""
        ...

    def merged(self, sketches: Sequence[Metric], now: float) -> Iterable[Metric]:
        """The gauges computed on all workers' sketches (each sample is one worker's share)."""
        ...


def merge_sketches(
    families: Sequence[Metric], mergeables: Sequence[Mergeable], now: float,
) -> list[Metric]:
    """``families`` without their sketches, plus what each mergeable computes from them."""
    sketches = [f for f in families if f.name.startswith(catalog.SKETCH_PREFIX)]
    out = [f for f in families if not f.name.startswith(catalog.SKETCH_PREFIX)]
    for m in mergeables:
        try:
            out += m.merged(sketches, now)
        except Exception:  # one broken aggregator costs its own gauges, never the scrape
            log.exception("inferwatch sdk: aggregator %r failed to merge the workers' sketches", m)
    return out
