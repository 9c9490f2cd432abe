"""The notify stages, one ``Stage`` signature composed in order (Alertmanager's notify path).

mute -> actions -> dedup -> enqueue. What is enqueued is owed in the outbox;
the receiver's queue (``_delivery``) sends it, retries it, rate-limits it and
records it, off the tick. A stage that holds a notification back releases it
from ``tick``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from inferwatch.alerting._delivery import ReceiverQueue
from inferwatch.alerting._nflog import NotificationLog, NotifyEntry
from inferwatch.alerting._notification import AlertGroup, Notification, Stage, fingerprint
from inferwatch.alerting._outbox import Outbox
from inferwatch.alerting.oncall import Acks

__all__ = ["DedupStage", "EnqueueStage", "StageChain", "needs_update"]

log = logging.getLogger("inferwatch.alerting")


class _NoTick:
    def tick(self, now: float) -> list[Notification]:
        """Nothing held back."""
        return []


def needs_update(entry: NotifyEntry | None, g: AlertGroup, send_resolved: bool, now: float,
                 acked: bool = False) -> bool:
    """Alertmanager's dedup rule: new firing alerts, newly resolved ones, or the repeat is due.

    An acknowledged group gets no repeats (its news still goes out).
    """
    firing = {fingerprint(a) for a in g.firing()}
    resolved = {fingerprint(a) for a in g.resolved()}
    if entry is None:
        return bool(firing)
    if not firing <= entry.firing:
        return True
    if not firing:
        # Everything resolved: tell the receiver only if it heard of something firing.
        return bool(entry.firing)
    if send_resolved and not resolved <= entry.resolved:
        return True
    return not acked and entry.sent_at + g.repeat_interval <= now


class DedupStage(_NoTick):
    """Passes only groups whose state changed since the last delivery (or whose repeat is due)."""

    def __init__(self, nflog: NotificationLog, send_resolved: bool, acks: Acks | None = None) -> None:
        self.nflog = nflog
        self.send_resolved = send_resolved
        self.acks = acks

    def process(self, n: Notification, now: float) -> Notification | None:
        """Keep groups that need an update; drop resolved alerts if the receiver wants none."""
        groups = []
        for g in n.groups:
            acked = self.acks is not None and self.acks.get(g.key, now) is not None
            if not needs_update(self.nflog.get(n.receiver, g.key), g, self.send_resolved, now, acked):
                continue
            if not self.send_resolved:
                g = replace(g, alerts=g.firing())
            groups.append(g)
        return n.with_groups(groups) if groups else None


class EnqueueStage(_NoTick):
    """Puts the notification in the outbox and lets the receiver's queue start it (the end of a chain)."""

    def __init__(self, outbox: Outbox, queue: ReceiverQueue) -> None:
        self.outbox = outbox
        self.queue = queue

    def process(self, n: Notification, now: float) -> Notification | None:
        """Owe ``n``; an inline queue delivers it now, a threaded one starts sending it."""
        self.outbox.put(n, now, self.queue.busy())
        self.queue.tick(now)
        return None


class StageChain:
    """Stages run in order; what a stage releases on ``tick`` continues from the next stage."""

    def __init__(self, stages: Sequence[Stage]) -> None:
        self.stages = tuple(stages)

    def process(self, n: Notification, now: float, start: int = 0) -> Notification | None:
        """Run ``n`` through the stages from ``start``."""
        current: Notification | None = n
        for stage in self.stages[start:]:
            if current is None:
                return None
            current = stage.process(current, now)
        return current

    def tick(self, now: float) -> None:
        """Let each stage release what it held."""
        for i, stage in enumerate(self.stages):
            for released in stage.tick(now):
                self.process(released, now, i + 1)
