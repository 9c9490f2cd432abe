"""What the pipeline holds about one alert right now: the read side of Alertmanager's API v2."""

from __future__ import annotations

from dataclasses import dataclass

from inferwatch.alerting._route import Route
from inferwatch.rules import Alert

__all__ = ["AlertView"]


@dataclass(frozen=True, slots=True)
class AlertView:
    """An alert not yet ended, where it is routed, and what mutes it (silence ids, source alerts)."""

    alert: Alert
    updated_at: float
    routes: tuple[Route, ...]
    silenced_by: tuple[str, ...]
    inhibited_by: tuple[Alert, ...]

    @property
    def receivers(self) -> list[str]:
        """The receivers of the routes the alert goes to, in tree order."""
        return [r.options.receiver for r in self.routes]

    @property
    def state(self) -> str:
        """``suppressed`` when silenced or inhibited, else ``active`` (Alertmanager's states)."""
        return "suppressed" if self.silenced_by or self.inhibited_by else "active"
