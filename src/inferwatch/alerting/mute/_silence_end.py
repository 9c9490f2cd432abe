"""Resolutions a silence swallowed, sent when it ends (Alertmanager issue #226).

An alert that a receiver heard firing and that resolves under a silence is
dropped by the mute stage, so the receiver would think it still fires. Its
resolution is kept here; once no silence matches it any more, it goes back
into the dispatcher, where the dedup stage sends it to whoever heard it fire.
A new firing of the same alert drops the kept resolution. Kept in memory, for
at most ``KEEP_S``.
"""

from __future__ import annotations

from inferwatch.alerting._nflog import NotificationLog
from inferwatch.alerting._notification import AlertGroup, fingerprint
from inferwatch.alerting.mute._silence import Silences
from inferwatch.model import matches_all
from inferwatch.rules import Alert

__all__ = ["SilencedResolutions"]

KEEP_S = 7 * 86400.0  # a silence longer than this: its swallowed resolutions are forgotten


class SilencedResolutions:
    """Keeps resolved alerts muted by a silence that some receiver heard firing."""

    def __init__(self, silences: Silences, nflog: NotificationLog, receivers: list[str]) -> None:
        self._silences, self._nflog, self._receivers = silences, nflog, receivers
        self._kept: dict[str, tuple[Alert, float]] = {}

    def flushed(self, g: AlertGroup, now: float) -> None:
        """Keep the group's resolved alerts that a silence mutes and a receiver heard firing."""
        for a in g.resolved():
            fp = fingerprint(a)
            if fp in self._kept or not self._silences.mutes(a.labels, now):
                continue
            if any(fp in e.firing for r in self._receivers if (e := self._nflog.get(r, g.key)) is not None):
                self._kept[fp] = (a, now)

    def fired(self, alerts: list[Alert], now: float) -> None:
        """A new firing of a kept alert: its old resolution is moot."""
        for a in alerts:
            if not a.resolved(now):
                self._kept.pop(fingerprint(a), None)

    def due(self, now: float) -> list[Alert]:
        """Kept resolutions no silence mutes now (they leave), and forget those kept too long."""
        out = []
        for fp, (a, since) in list(self._kept.items()):
            if now - since > KEEP_S:
                del self._kept[fp]
            elif not self._silences.mutes(a.labels, now):
                del self._kept[fp]
                out.append(a)
        return out

    def next_check(self) -> float | None:
        """When the latest silence muting a kept resolution ends (the replay's next tick)."""
        silences = self._silences.list()
        ends = [max((s.ends_at for s in silences if matches_all(s.matchers, a.labels)), default=0.0)
                for a, _ in self._kept.values()]
        return min(ends, default=None)

    def __len__(self) -> int:
        return len(self._kept)
