"""The alert as the evaluator hands it to the notification pipeline.

Shaped like the alerts Prometheus posts to Alertmanager: labels identify the
alert, ``starts_at``/``ends_at`` bound its firing episode, and an alert whose
``ends_at`` is at or before *now* is resolved.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from inferwatch.model import Labels

__all__ = ["Alert", "AlertSink", "AlertState"]


class AlertState(enum.StrEnum):
    """Where a rule's alert stands (Prometheus's states, plus resolved)."""

    INACTIVE = "inactive"
    PENDING = "pending"
    FIRING = "firing"
    RESOLVED = "resolved"


@dataclass(frozen=True, slots=True)
class Alert:
    """A firing (or just resolved) alert, as sent to the pipeline.

    ``labels`` include ``alertname``, ``tier``, ``severity`` and ``dimension``.
    ``ends_at`` is ``None`` while the alert fires with no known end. ``peak`` is the highest
    value seen while it fired in this episode (kept by the alerting pipeline; NaN when unknown).
    """

    labels: Labels
    annotations: Mapping[str, str] = field(default_factory=dict)
    starts_at: float = 0.0
    ends_at: float | None = None
    value: float = float("nan")
    generator_url: str = ""
    peak: float = float("nan")

    @property
    def name(self) -> str:
        """The ``alertname`` label."""
        return self.labels.get("alertname", "")

    @property
    def fingerprint(self) -> str:
        """Stable identity of the alert: the fingerprint of its labels."""
        return self.labels.fingerprint()

    def resolved(self, now: float) -> bool:
        """Whether the alert has ended by ``now``."""
        return self.ends_at is not None and self.ends_at <= now


class AlertSink(Protocol):
    """Where the evaluator sends alerts after each evaluation (the pipeline, a recorder)."""

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Receive firing and recently resolved alerts at simulated or real time ``now``."""
        ...
