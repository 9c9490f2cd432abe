"""Receivers' health: ``NotificationsFailing``, the pipeline's own alert for a receiver that keeps failing.

After ``threshold`` failed attempts in a row a receiver gets a firing
``NotificationsFailing{receiver="..."}`` alert, refreshed at every further
failure and resolved by its next success. The pipeline routes it like any
alert, except never to the receiver it is about (that one goes to
``alerting.notify.fallback_receiver`` instead).
"""

from __future__ import annotations

from inferwatch.model import Labels
from inferwatch.rules import Alert

__all__ = ["NOTIFICATIONS_FAILING", "ReceiverHealth", "about_receiver"]

NOTIFICATIONS_FAILING = "NotificationsFailing"


class ReceiverHealth:
    """Counts failed attempts in a row per receiver; says when to fire or resolve the alert.

    >>> h = ReceiverHealth(threshold=2)
    >>> h.attempted("wecom", "HTTP 503", 0.0), h.attempted("wecom", "HTTP 503", 5.0) is not None
    (None, True)
    >>> h.attempted("wecom", None, 9.0).ends_at
    9.0
    """

    def __init__(self, threshold: int = 3) -> None:
        self.threshold = threshold
        self._failures: dict[str, int] = {}
        self._since: dict[str, float] = {}

    def attempted(self, receiver: str, error: str | None, now: float) -> Alert | None:
        """The alert to send after this attempt (firing, refreshed, resolved), or ``None``."""
        if error is None:
            failing = self._failures.pop(receiver, 0) >= self.threshold
            since = self._since.pop(receiver, now)
            return self._alert(receiver, since, now, "delivered again") if failing else None
        count = self._failures.get(receiver, 0) + 1
        self._failures[receiver] = count
        self._since.setdefault(receiver, now)
        if count < self.threshold:
            return None
        return self._alert(receiver, self._since[receiver], None, f"{count} attempts in a row failed; "
                           f"last: {error}")

    def failing(self) -> list[str]:
        """Receivers over the threshold now."""
        return sorted(r for r, n in self._failures.items() if n >= self.threshold)

    @staticmethod
    def _alert(receiver: str, since: float, ends_at: float | None, description: str) -> Alert:
        labels = Labels({"alertname": NOTIFICATIONS_FAILING, "receiver": receiver, "tier": "P1",
                         "severity": "major", "dimension": "service", "service": "inferwatch"})
        return Alert(labels, {"summary": f"Notifications to receiver {receiver} keep failing",
                              "description": description}, since, ends_at, float("nan"))


def about_receiver(a: Alert, receiver: str) -> bool:
    """Whether ``a`` is the ``NotificationsFailing`` alert about ``receiver`` (never sent to it)."""
    return a.labels.get("alertname") == NOTIFICATIONS_FAILING and a.labels.get("receiver") == receiver
