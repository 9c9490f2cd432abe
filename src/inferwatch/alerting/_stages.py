"""The notify stages, one ``Stage`` signature composed in order (Alertmanager's notify path).

mute -> dedup -> rate limit -> deliver (notify + retry) -> record. A stage
that holds a notification back (rate limit, retry) releases it from ``tick``.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._inhibit import Muter
from inferwatch.alerting._nflog import NotificationLog, NotifyEntry
from inferwatch.alerting._notification import AlertGroup, Notification, Notifier, Stage, fingerprint

__all__ = ["DedupStage", "DeliverStage", "MuteStage", "RateLimitStage", "RecordStage", "StageChain"]

log = logging.getLogger("inferwatch.alerting")


class _NoTick:
    def tick(self, now: float) -> list[Notification]:
        """Nothing held back."""
        return []


class MuteStage(_NoTick):
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


def needs_update(entry: NotifyEntry | None, g: AlertGroup, send_resolved: bool, now: float) -> bool:
    """Alertmanager's dedup rule: new firing alerts, newly resolved ones, or the repeat is due."""
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
    return entry.sent_at + g.repeat_interval <= now


class DedupStage(_NoTick):
    """Passes only groups whose state changed since the last delivery (or whose repeat is due)."""

    def __init__(self, nflog: NotificationLog, send_resolved: bool) -> None:
        self.nflog = nflog
        self.send_resolved = send_resolved

    def process(self, n: Notification, now: float) -> Notification | None:
        """Keep groups that need an update; drop resolved alerts if the receiver wants none."""
        groups = []
        for g in n.groups:
            if not needs_update(self.nflog.get(n.receiver, g.key), g, self.send_resolved, now):
                continue
            if not self.send_resolved:
                g = replace(g, alerts=g.firing())
            groups.append(g)
        return n.with_groups(groups) if groups else None


class RateLimitStage:
    """At most ``count`` notifications per ``per`` seconds; the excess is merged, never dropped."""

    def __init__(self, count: int, per: float) -> None:
        self.count, self.per = count, per
        self._sent: list[float] = []
        self._held: dict[str, AlertGroup] = {}
        self._notes: tuple[str, ...] = ()
        self._receiver = ""

    def _room(self, now: float) -> bool:
        self._sent = [t for t in self._sent if t > now - self.per]
        return len(self._sent) < self.count

    def process(self, n: Notification, now: float) -> Notification | None:
        """Pass when the window has room, else hold (a newer flush of a group replaces the older)."""
        if not self._held and self._room(now):
            self._sent.append(now)
            return n
        self._receiver = n.receiver
        self._notes = self._notes + tuple(x for x in n.notes if x not in self._notes)
        for g in n.groups:
            self._held[g.key] = g
        return None

    def tick(self, now: float) -> list[Notification]:
        """Release everything held as one merged notification once the window has room."""
        if not self._held or not self._room(now):
            return []
        self._sent.append(now)
        merged = Notification(self._receiver, tuple(self._held.values()), self._notes)
        self._held, self._notes = {}, ()
        return [merged]

    def held(self) -> int:
        """Groups waiting for room."""
        return len(self._held)


@dataclass(slots=True)
class _Pending:
    n: Notification
    attempts: int
    due: float
    error: str


class DeliverStage:
    """Calls the notifier; retryable failures are tried again later with backoff and jitter."""

    def __init__(
        self, notifier: Notifier, *, max_attempts: int, initial_backoff: float, max_backoff: float,
        jitter: float, rng: random.Random, on_give_up: Callable[[Notification, str, float], None],
    ) -> None:
        self.notifier = notifier
        self.max_attempts = max_attempts
        self.initial_backoff, self.max_backoff, self.jitter = initial_backoff, max_backoff, jitter
        self._rng = rng
        self._on_give_up = on_give_up
        self._pending: dict[tuple[str, ...], _Pending] = {}

    def process(self, n: Notification, now: float) -> Notification | None:
        """First attempt; a newer notification for the same groups replaces a pending retry."""
        key = tuple(g.key for g in n.groups)
        self._pending.pop(key, None)
        return self._attempt(_Pending(n, 0, now, ""), key, now)

    def _attempt(self, p: _Pending, key: tuple[str, ...], now: float) -> Notification | None:
        p.attempts += 1
        try:
            self.notifier.notify(p.n)
        except NotifyError as exc:
            p.error = str(exc)
            if exc.retryable and p.attempts < self.max_attempts:
                p.due = now + self._backoff(p.attempts)
                self._pending[key] = p
                log.info("%s: attempt %d failed, retrying: %s", self.notifier.name, p.attempts, exc)
                return None
            verdict = f"gave up after {p.attempts} attempts" if exc.retryable else "not retryable"
            msg = f"{self.notifier.name}: {verdict}: {exc}"
            log.error("%s", msg)
            self._on_give_up(p.n, msg, now)
            return None
        except Exception as exc:  # a notifier bug must not stop the pipeline
            log.exception("%s: unexpected failure", self.notifier.name)
            self._on_give_up(p.n, f"{self.notifier.name}: failed: {exc.__class__.__name__}", now)
            return None
        return p.n

    def _backoff(self, attempts: int) -> float:
        base: float = min(self.max_backoff, self.initial_backoff * 2.0 ** (attempts - 1))
        return base * (1 + self.jitter * (2 * self._rng.random() - 1))

    def tick(self, now: float) -> list[Notification]:
        """Retry what is due; return the notifications delivered now."""
        out = []
        for key, p in sorted(self._pending.items(), key=lambda kv: kv[1].due):
            if p.due <= now:
                del self._pending[key]
                done = self._attempt(p, key, now)
                if done is not None:
                    out.append(done)
        return out

    def pending(self) -> int:
        """Notifications waiting for a retry."""
        return len(self._pending)

    def next_due(self) -> float | None:
        """When the next retry is due."""
        return min((p.due for p in self._pending.values()), default=None)


class RecordStage(_NoTick):
    """Writes a delivered notification to the notification log and hands it to ``on_sent``."""

    def __init__(self, nflog: NotificationLog, on_sent: Callable[[Notification, float], None]) -> None:
        self.nflog = nflog
        self._on_sent = on_sent

    def process(self, n: Notification, now: float) -> Notification | None:
        """Record each group as sent."""
        for g in n.groups:
            firing = frozenset(fingerprint(a) for a in g.firing())
            resolved = frozenset(fingerprint(a) for a in g.resolved())
            self.nflog.log(n.receiver, g.key, firing, resolved, now)
        self._on_sent(n, now)
        return n


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
