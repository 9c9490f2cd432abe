"""Escalation: a route's policy notifies its steps' receivers on the clock until someone acknowledges.

An episode starts at the first flush of a group with an unmuted firing alert.
Step ``i`` is due ``after`` seconds later (its repeats ``every`` seconds after
that); a due step is sent only while the group fires, is not acknowledged and
is not muted (silence, inhibition), else it waits. Receivers told during the
episode get the group's updates (new alerts, the resolution) through their
usual dedup; the episode ends when the group resolves, and so does its
acknowledgement, so a new firing escalates again from the first step.
Episodes are kept in SQLite, so a restart neither repeats nor forgets a step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from inferwatch.alerting._notification import AlertGroup, Notification
from inferwatch.alerting._state import StateStore
from inferwatch.alerting.mute import MuteStage
from inferwatch.alerting.oncall._acks import Acks
from inferwatch.alerting.oncall._schedule import oncall_at
from inferwatch.model import format_duration
from inferwatch.settings import SCHEDULE_PREFIX, BaseAlertingConfig, EscalationSpec

__all__ = ["Episode", "Escalator", "StepEvent"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS escalations (
  group_key TEXT PRIMARY KEY, policy TEXT NOT NULL, started REAL NOT NULL, sent TEXT NOT NULL,
  notified TEXT NOT NULL)"""

Send = Callable[[Notification, float], None]
VOICE_TYPES = frozenset({"aliyun_voice", "tencent_voice", "twilio"})
"""Receivers that place a phone call: an acknowledgement is not called through."""


@dataclass(slots=True)
class Episode:
    """One firing episode of an escalating group."""

    key: str
    policy: str
    started: float
    sent: set[tuple[int, int]] = field(default_factory=set)  # (step, repeat)
    notified: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class StepEvent:
    """A step was sent (for the history and the dashboard)."""

    group: AlertGroup
    policy: str
    step: int
    receivers: tuple[str, ...]
    t: float


class Escalator:
    """Keeps the episodes of escalating groups and sends their due steps on ``tick``."""

    def __init__(self, config: BaseAlertingConfig, db: StateStore, acks: Acks, mute: MuteStage,
                 updates: Mapping[str, Callable[[Notification, float], object]], send: Send,
                 live: Callable[[str, float], AlertGroup | None],
                 on_step: Callable[[StepEvent], None] = lambda e: None) -> None:
        self._config, self._db, self._acks, self._mute = config, db, acks, mute
        self._updates, self._send, self._live, self._on_step = updates, send, live, on_step
        self._last = float("-inf")
        with db.transaction() as c:
            c.execute(_SCHEMA)
        self.episodes: dict[str, Episode] = {}
        self.reload()

    def reload(self) -> None:
        """Read the episodes again (when an HA replica takes over its peer's escalations)."""
        rows = self._db.query("SELECT * FROM escalations")
        self.episodes = {str(key): Episode(str(key), str(policy), float(str(started)),
                                           {(int(a), int(b)) for a, b in json.loads(str(sent))},
                                           set(json.loads(str(notified))))
                         for key, policy, started, sent, notified in rows}

    def flush(self, policy: str, g: AlertGroup, now: float) -> bool:
        """The group's flush: updates to who was told, start or end the episode, due steps.

        Returns whether the episode ended (the group resolved).
        """
        ep = self.episodes.get(g.key)
        if ep is not None:
            for receiver in sorted(ep.notified):
                self._updates[receiver](Notification(receiver, (g,)), now)
        if not g.firing():
            if ep is not None:
                self._end(g.key)
            return ep is not None
        if ep is None and self._mute.process(Notification("", (g,)), now) is not None:
            ep = Episode(g.key, policy, now)
            self.episodes[g.key] = ep
            self._save(ep)
        if ep is not None:
            self._run(ep, g, now)
        return False

    def tick(self, now: float) -> None:
        """Send every due step of every episode whose group still fires, unacknowledged and unmuted."""
        self._last = now
        for ep in list(self.episodes.values()):
            g = self._live(ep.key, now)
            if g is None:  # its alerts are gone (forgotten, or a restart without them): so is the episode
                self._end(ep.key)
                continue
            self._run(ep, g, now)

    def _run(self, ep: Episode, g: AlertGroup, now: float) -> None:
        self._last = max(self._last, now)
        policy = self._config.escalation(ep.policy)
        if policy is None:
            return
        due = self._due(ep, policy, now)  # first: a storm ticks often, and most ticks have nothing due
        if not due or not g.firing() or self._acks.get(ep.key, now) is not None:
            return
        if self._mute.process(Notification("", (g,)), now) is None:
            return
        ep.sent.update(due)
        for i in sorted({i for i, _ in due}):
            self._step(ep, policy, i, g, now)
        self._save(ep)

    def hurry(self, key: str, now: float, why: str) -> int | None:
        """Send the episode's next step now instead of after its delay (a call went unanswered).

        Only while the group fires, unacknowledged and unmuted; returns the step sent (1-based).
        """
        ep = self.episodes.get(key)
        policy = self._config.escalation(ep.policy) if ep is not None else None
        g = self._live(key, now)
        if ep is None or policy is None or g is None or not g.firing() or self._acks.get(key, now):
            return None
        nxt = next((i for i in range(len(policy.steps)) if (i, 0) not in ep.sent), None)
        if nxt is None or self._mute.process(Notification("", (g,)), now) is None:
            return None
        ep.sent.add((nxt, 0))
        self._step(ep, policy, nxt, g, now, why)
        self._save(ep)
        return nxt + 1

    def acknowledged(self, key: str, note: str, now: float) -> list[str]:
        """Send ``note`` (who acknowledged) to every receiver the episode paged: the acknowledgement shows
        on each channel that carried the page (a follow-up message, a card or incident updated where the
        channel can), except a voice call (a call to say nothing is needed wakes someone for nothing);
        returns those receivers."""
        ep, g = self.episodes.get(key), self._live(key, now)
        calls = {r.name for r in self._config.effective_receivers() if r.type in VOICE_TYPES}
        told = sorted(ep.notified - calls) if ep is not None and g is not None else []
        for receiver in told:
            self._send(Notification(receiver, (g,), (note,), kind="acknowledged"), now)  # type: ignore[arg-type]
        return told

    @staticmethod
    def _due(ep: Episode, policy: EscalationSpec, now: float) -> list[tuple[int, int]]:
        return [(i, k) for i, k, t in _schedule(policy, ep.started) if t <= now and (i, k) not in ep.sent]

    def _step(self, ep: Episode, policy: EscalationSpec, i: int, g: AlertGroup, now: float,
              why: str = "") -> None:
        step = policy.steps[i]
        why = why or (f"{format_duration(step.after)} without acknowledgement" if step.after else "")
        note = f"Escalation {policy.name}: step {i + 1} of {len(policy.steps)}" + (f" ({why})" if why else "")
        targets = [t for target in step.notify for t in self._targets(target, now)]
        self._on_step(StepEvent(g, policy.name, i + 1, tuple(r for r, _ in targets), now))
        for receiver, extra in targets:
            ep.notified.add(receiver)
            self._send(Notification(receiver, (g,), (note, *extra), escalation=policy.name, step=i + 1), now)

    def _targets(self, target: str, now: float) -> list[tuple[str, tuple[str, ...]]]:
        if not target.startswith(SCHEDULE_PREFIX):
            return [(target, ())]
        found = self._config.oncall.layer(target)
        if found is None:
            return []
        shift = oncall_at(found[0], found[1], now)
        line = f"On call ({shift.schedule}/{shift.layer}): {shift.member}"
        return [(receiver, (f"{line}, {receiver}: {contact}",)) for receiver, contact in shift.contacts]

    def _end(self, key: str) -> None:
        self.episodes.pop(key, None)
        self._acks.remove(key)
        with self._db.transaction() as c:
            c.execute("DELETE FROM escalations WHERE group_key=?", (key,))

    def _save(self, ep: Episode) -> None:
        with self._db.transaction() as c:
            c.execute("INSERT OR REPLACE INTO escalations VALUES (?,?,?,?,?)",
                      (ep.key, ep.policy, ep.started, json.dumps(sorted(ep.sent)),
                       json.dumps(sorted(ep.notified))))

    def next_wakeup(self) -> float | None:
        """The next step due after the last tick (a step held back by an ack or a silence waits for news)."""
        times = []
        for ep in self.episodes.values():
            policy = self._config.escalation(ep.policy)
            if policy is None:
                continue
            times += [t for i, k, t in _schedule(policy, ep.started)
                      if (i, k) not in ep.sent and t > self._last]
            ack = self._acks.get(ep.key, self._last)
            if ack is not None and ack.expires_at is not None:  # the steps held by it resume then
                times.append(ack.expires_at)
        return min(times, default=None)


def _schedule(policy: EscalationSpec, started: float) -> list[tuple[int, int, float]]:
    return [(i, k, started + s.after + k * s.every) for i, s in enumerate(policy.steps)
            for k in range(s.repeat + 1)]
