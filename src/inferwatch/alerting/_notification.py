"""What flows through the notify stages: a notification of one or more alert groups."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from inferwatch.model import Labels
from inferwatch.rules import Alert

__all__ = ["AlertGroup", "Notification", "Notifier", "Stage", "fingerprint"]


@dataclass(frozen=True, slots=True)
class AlertGroup:
    """The alerts of one aggregation group at a flush."""

    key: str
    labels: Labels
    alerts: tuple[Alert, ...]
    now: float
    repeat_interval: float = float("inf")
    idempotency_key: str = ""  # stable across retries and restarts; set when queued for delivery

    def firing(self) -> tuple[Alert, ...]:
        """Alerts still firing at the flush."""
        return tuple(a for a in self.alerts if not a.resolved(self.now))

    def resolved(self) -> tuple[Alert, ...]:
        """Alerts resolved by the flush."""
        return tuple(a for a in self.alerts if a.resolved(self.now))

    @property
    def status(self) -> str:
        """``firing`` while any alert fires, else ``resolved``."""
        return "firing" if self.firing() else "resolved"

    def common_labels(self) -> Labels:
        """Labels every alert of the group shares."""
        if not self.alerts:
            return Labels()
        first = self.alerts[0].labels
        return Labels({k: v for k, v in first.items() if all(a.labels.get(k) == v for a in self.alerts)})


@dataclass(frozen=True, slots=True)
class Notification:
    """What a receiver is asked to deliver: usually one group, several when merged by a rate limit.

    ``notes`` are extra lines (a rollback recommendation, an action outcome); a ``digest``
    notification's text is its notes. ``id`` is the idempotency key, the same on every
    attempt and after a restart (each group's own is ``AlertGroup.idempotency_key``), so a
    receiver that deduplicates can drop the repeat an at-least-once delivery may send.
    """

    receiver: str
    groups: tuple[AlertGroup, ...]
    notes: tuple[str, ...] = field(default=())
    kind: str = "alerts"
    id: str = ""
    escalation: str = ""  # the policy, when an escalation step sends this
    step: int = 0  # that step, from 1
    sender: str = ""  # the HA replica that sends it, named in the message (set at the send; empty: no pair)

    @property
    def alerts(self) -> tuple[Alert, ...]:
        """Every alert of every group."""
        return tuple(a for g in self.groups for a in g.alerts)

    def with_groups(self, groups: Sequence[AlertGroup]) -> Notification:
        """A copy carrying other groups."""
        return replace(self, groups=tuple(groups))

    def with_notes(self, *notes: str) -> Notification:
        """A copy with lines added."""
        return replace(self, notes=self.notes + tuple(n for n in notes if n not in self.notes))


class Stage(Protocol):
    """One step of the notify path; ``None`` stops the notification here."""

    def process(self, n: Notification, now: float) -> Notification | None:
        """Pass the notification on (maybe changed), or stop it."""
        ...

    def tick(self, now: float) -> list[Notification]:
        """Notifications this stage held back and now releases to the next stage."""
        ...


class Notifier(Protocol):
    """A receiver integration: delivers or raises ``NotifyError(retryable=...)``."""

    name: str

    def notify(self, n: Notification) -> None:
        """Deliver one notification."""
        ...


@functools.lru_cache(maxsize=1 << 16)
def _labels_fingerprint(labels: Labels) -> str:
    return labels.fingerprint()


def fingerprint(alert: Alert) -> str:
    """``alert.fingerprint``, memoised by label set (hashing is the storm's hot spot)."""
    return _labels_fingerprint(alert.labels)
