"""The contract between the SDK's background thread and the aggregators it feeds.

The request thread only enqueues ``(kind, payload)``; the one background thread
hands each batch of payloads of a kind to the aggregators attached for that
kind, and asks every aggregator for its metric families at exposition time.
Packages below the SDK in the table (``quality``, ``business``) implement this
protocol; the SDK never imports them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from prometheus_client.metrics_core import Metric

__all__ = ["Aggregator"]


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
