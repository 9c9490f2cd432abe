"""The mute stage: silences, inhibitions and maintenance windows are muters feeding this one stage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from inferwatch.alerting._notification import Notification
from inferwatch.alerting.mute._inhibit import Muter

__all__ = ["MuteStage"]


class MuteStage:
    """Drops alerts that any muter (silences, inhibitions) mutes; stops if none remain."""

    def __init__(self, muters: Sequence[Muter]) -> None:
        self.muters = tuple(muters)

    def process(self, n: Notification, now: float) -> Notification | None:
        """Keep unmuted alerts."""
        groups = []
        for g in n.groups:
            kept = tuple(a for a in g.alerts if not any(m.mutes(a.labels, now) for m in self.muters))
            if kept:
                groups.append(replace(g, alerts=kept))
        return n.with_groups(groups) if groups else None

    def tick(self, now: float) -> list[Notification]:
        """Nothing held back."""
        return []
