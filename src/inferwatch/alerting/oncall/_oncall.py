"""The pipeline's on-call side: acknowledgements of groups, and what goes into the alert history.

Called by the pipeline under its lock; the history writes are one transaction
per batch of events, on the notification thread (never the evaluation's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from inferwatch._exceptions import InputError
from inferwatch.alerting._notification import AlertGroup, fingerprint
from inferwatch.alerting._records import NotificationRecord
from inferwatch.alerting.actions import ActionRecord
from inferwatch.alerting.mute import Inhibitor, Muter, Silences
from inferwatch.alerting.oncall._acks import Ack, Acks, group_id
from inferwatch.alerting.oncall._episode_ids import EpisodeIds
from inferwatch.alerting.oncall._escalation import Episode, StepEvent
from inferwatch.alerting.oncall._history import Event, History
from inferwatch.model import Labels, Matcher, matches_all
from inferwatch.rules import Alert

__all__ = ["OnCall", "group_state", "stands_for"]


class OnCall:
    """Acknowledgements and history events for one pipeline."""

    def __init__(self, acks: Acks, history: History, groups: Callable[[float], Sequence[AlertGroup]],
                 episodes: EpisodeIds | None = None) -> None:
        self.acks, self.history = acks, history
        self._episodes = episodes
        self._groups = groups
        self._muted: dict[tuple[str, str], str] = {}  # (fingerprint, kind) recorded while muted
        self.replica = ""
        """The HA replica that delivers here: named in every ``notified`` event (empty: no pair)."""

    # -- acknowledgements ---------------------------------------------------

    def acknowledge(self, now: float, by: str, comment: str = "", *, gid: str = "",
                    matchers: Sequence[Matcher] = (), expires_at: float | None = None) -> list[Ack]:
        """Acknowledge the firing groups with id ``gid`` or with an alert matching ``matchers``."""
        if not by.strip():
            raise InputError("ack: 'by' (who acknowledges) must not be empty")
        if expires_at is not None and expires_at <= now:
            raise InputError("ack: 'expires' must be in the future")
        groups = self._select(now, gid, matchers)
        acks = [self.acks.add(Ack(g.key, by, comment, now, expires_at)) for g in groups]
        self.history.add([_group_event(now, "acknowledged", g, {"by": by, "comment": comment})
                          for g in groups])
        return acks

    def unacknowledge(self, now: float, by: str, *, gid: str = "",
                      matchers: Sequence[Matcher] = ()) -> list[Ack]:
        """End the acknowledgements of the selected groups (their escalation goes on)."""
        out = []
        for g in self._select(now, gid, matchers, firing=False):
            old = self.acks.remove(g.key)
            if old is not None:
                out.append(old)
                self.history.add([_group_event(now, "unacknowledged", g, {"by": by})])
        return out

    def answered(self, now: float, key: str, who: str, detail: Mapping[str, object]) -> list[Ack]:
        """A confirmed call about group ``key`` was answered: an ``answered`` event, then the group's
        acknowledgement by ``who`` (the same as ``acknowledge``: the escalation stops)."""
        groups = [g for g in self._groups(now) if g.key == key and g.firing()]
        if not groups:
            return []
        self.history.add([_group_event(now, "answered", groups[0], {"by": who, **detail})])
        return self.acknowledge(now, who, "answered the phone call", gid=group_id(key))

    def unanswered(self, now: float, key: str, detail: Mapping[str, object]) -> bool:
        """Every round of a confirmed call about group ``key`` went unanswered: an event."""
        groups = [g for g in self._groups(now) if g.key == key and g.firing()]
        self.history.add([_group_event(now, "unanswered", g, dict(detail)) for g in groups])
        return bool(groups)

    def _select(self, now: float, gid: str, matchers: Sequence[Matcher], firing: bool = True,
                ) -> list[AlertGroup]:
        if not gid and not matchers:
            raise InputError("ack: give a group id or matchers")
        found = [g for g in self._groups(now)
                 if (not gid or group_id(g.key) == gid)
                 and (not matchers or any(matches_all(matchers, a.labels) for a in g.alerts))
                 and (g.firing() or not firing)]
        if not found:
            what = f"group {gid!r}" if gid else "alerts matching " + ",".join(str(m) for m in matchers)
            raise InputError(f"ack: no {'firing ' if firing else ''}{what}")
        return found

    def resolved(self, key: str) -> None:
        """A group resolved: its acknowledgement ends, and its episode (the episode's links with it)."""
        self.acks.remove(key)
        if self._episodes is not None:
            self._episodes.end(key)

    # -- history --------------------------------------------------------------

    def received(self, old: dict[str, Alert], fresh: Iterable[Alert], now: float) -> None:
        """Alerts in: a new firing or a resolution is an event."""
        events = []
        for a in fresh:
            fp = fingerprint(a)
            before = old.get(fp)
            was = before is not None and not before.resolved(now)
            if not a.resolved(now) and (not was or (before is not None and before.starts_at != a.starts_at)):
                events.append(Event(now, "firing", a.labels, fingerprint=fp,
                                    detail={"starts_at": a.starts_at}))
            elif a.resolved(now) and was:
                events.append(Event(now, "resolved", a.labels, fingerprint=fp))
        self.history.add(events)

    def pending(self, labels: Sequence[Mapping[str, str]], now: float) -> None:
        """Alerts the evaluator holds pending (their ``for`` not yet over)."""
        self.history.add([Event(now, "pending", lab, fingerprint=Labels(lab).fingerprint())
                          for lab in labels])

    def flushed(self, g: AlertGroup, inhibitor: Inhibitor, silences: Silences, now: float) -> None:
        """A group's flush: alerts newly muted by a silence or an inhibition are events."""
        events = []
        for a in g.firing():
            fp = fingerprint(a)
            inhibitors = tuple(fingerprint(s) for s in inhibitor.inhibited_by(a.labels, now))
            for kind, by in (("silenced", silences.silenced_by(a.labels, now)), ("inhibited", inhibitors)):
                if by and (fp, kind) not in self._muted:
                    self._muted[(fp, kind)] = g.key
                    events.append(Event(now, kind, a.labels, group_id(g.key), fp, {"by": list(by)}))
                elif not by:
                    self._muted.pop((fp, kind), None)
        self.history.add(events)

    def notified(self, rec: NotificationRecord) -> None:
        """A delivery or a final failure, per group."""
        events = []
        for g in rec.groups:
            detail = {"receiver": rec.receiver, "outcome": rec.status,
                      "alerts": len(g["alerts"]), **({"error": rec.error} if rec.error else {}),
                      **({"escalation": rec.escalation, "step": rec.step} if rec.step else {}),
                      **({"replica": self.replica} if self.replica else {})}
            events.append(Event(rec.t, "notified", _common(g), group_id(g["group_key"]), detail=detail))
        self.history.add(events)

    def escalated(self, e: StepEvent) -> None:
        """An escalation step went out."""
        self.history.add([_group_event(e.t, "escalated", e.group, {
            "escalation": e.policy, "step": e.step, "receivers": list(e.receivers)})])

    def acted(self, rec: ActionRecord) -> None:
        """An action ran (or was skipped)."""
        self.history.add([Event(rec.t, "action", Labels(rec.labels), detail={
            "action": rec.action, "phase": rec.phase, "outcome": rec.outcome})])


def stands_for(g: AlertGroup, alerts: Iterable[Alert], inhibitor: Inhibitor, muters: Sequence[Muter],
               now: float) -> str | None:
    """"Stands for N alerts" when the group's shown alerts speak for muted ones (``None`` if not).

    Muted ones are the group's own (silenced, inhibited) and, elsewhere, those these inhibit
    (a rollback's review and warning of the same feature); one message is one incident.
    """
    firing = g.firing()
    shown = {fingerprint(a) for a in firing if not any(m.mutes(a.labels, now) for m in muters)}
    if not shown:
        return None
    muted = {fingerprint(a) for a in firing} - shown
    if any(inhibitor.is_source(fp) for fp in shown):  # a walk over the alerts only for a source
        for a in alerts:
            fp = fingerprint(a)
            if fp not in shown and fp not in muted and not a.resolved(now) and any(
                    fingerprint(s) in shown for s in inhibitor.inhibited_by(a.labels, now)):
                muted.add(fp)
    if not muted:
        return None
    return (f"Stands for {len(shown) + len(muted)} alerts: {len(shown)} shown, {len(muted)} muted "
            f"(lower levels or consequences of these, or silenced)")


def group_state(g: AlertGroup, receiver: str, ack: Ack | None, ep: Episode | None) -> dict[str, object]:
    """A group with its receiver, acknowledgement and escalation (the on-call API's JSON)."""
    return {"group_id": group_id(g.key), "labels": g.labels.to_dict(), "status": g.status,
            "receiver": receiver, "alerts": len(g.alerts), "firing": len(g.firing()),
            "ack": ack.to_json() if ack else None,
            "escalation": None if ep is None else {
                "policy": ep.policy, "started": ep.started,
                "step": max((i + 1 for i, _ in ep.sent), default=0), "notified": sorted(ep.notified)}}


def _common(g: dict[str, Any]) -> dict[str, str]:
    # The labels every alert of the group shares, so match[] on tier or feature finds the event too.
    sets = [a["labels"] for a in g["alerts"]]
    common = {k: v for k, v in sets[0].items() if all(s.get(k) == v for s in sets)} if sets else {}
    return {**common, **g["group_labels"]}


def _group_event(t: float, kind: str, g: AlertGroup, detail: dict[str, object]) -> Event:
    labels = {**g.common_labels(), **g.labels}
    return Event(t, kind, labels, group_id(g.key), detail={
        **detail, "fingerprints": sorted(fingerprint(a) for a in g.firing())})
