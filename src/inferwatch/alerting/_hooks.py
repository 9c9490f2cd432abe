"""The pipeline's side of delivery outcomes: the notification log, the records, receiver health."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from inferwatch.alerting._health import ReceiverHealth
from inferwatch.alerting._nflog import NotificationLog
from inferwatch.alerting._notification import Notification, Notifier, fingerprint
from inferwatch.alerting._records import NotificationRecord
from inferwatch.alerting._stages import needs_update
from inferwatch.rules import Alert

__all__ = ["Hooks"]


class _Pipeline(Protocol):
    """What the hooks use of the pipeline (a protocol, so the two modules do not import each other)."""

    @property
    def nflog(self) -> NotificationLog: ...

    @property
    def notifiers(self) -> Mapping[str, Notifier]: ...

    @property
    def health(self) -> ReceiverHealth: ...

    def _record(self, rec: NotificationRecord) -> None: ...

    def _put(self, fresh: list[Alert], now: float) -> None: ...

    def _normalise(self, a: Alert, now: float) -> Alert: ...

    @property
    def oncall(self) -> _Named: ...


class _Named(Protocol):
    replica: str


class Hooks:
    """Delivery outcomes into the pipeline (called on the ticking thread, under its lock)."""

    def __init__(self, p: _Pipeline) -> None:
        self._p = p

    def owed(self, n: Notification) -> bool:
        """Whether ``n`` still needs sending (the notification log may say it went out already)."""
        if n.kind != "alerts" or n.step:  # an escalation step is owed as such, whatever the log says
            return True
        return any(needs_update(self._p.nflog.get(n.receiver, g.key), g, True, g.now) for g in n.groups)

    def delivered(self, n: Notification, now: float) -> None:
        """Log ``n`` as sent (the log first: it is what a restart trusts), then record it."""
        for g in n.groups:
            firing = frozenset(fingerprint(a) for a in g.firing())
            resolved = frozenset(fingerprint(a) for a in g.resolved())
            self._p.nflog.log(n.receiver, g.key, firing, resolved, now)
        notifier = self._p.notifiers.get(n.receiver)  # a stand-in without credentials only printed it
        self._p._record(NotificationRecord.of(n, now, getattr(notifier, "delivered_as", "sent")))

    def gave_up(self, n: Notification, error: str, now: float) -> None:
        """Record a notification that failed for good."""
        self._p._record(NotificationRecord.of(n, now, "failed", error))

    def sender(self) -> str:
        """The HA replica delivering here (empty: no pair): each message names it."""
        return self._p.oncall.replica

    def attempted(self, receiver: str, error: str | None, now: float) -> None:
        """Count an attempt toward the receiver's health; a failing receiver raises its own alert."""
        alert = self._p.health.attempted(receiver, error, now)
        if alert is not None:
            self._p._put([self._p._normalise(alert, now)], now)
