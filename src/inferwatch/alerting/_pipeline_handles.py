"""Narrow handles on a ``Pipeline`` for the HTTP API: each route module gets only what it uses.

The silences API gets a :class:`SilencesHandle`, the Alertmanager API, the webhook and the
dashboard an :class:`AlertsHandle`, the on-call API an :class:`AcksHandle`; none of them
sees the pipeline's stages, queues or lock. Every call goes to the pipeline's current
parts, so a reload (``Pipeline.reconfigure`` swaps routes, actions and receivers) shows
through at once.

>>> from inferwatch.settings import BaseAlertingConfig
>>> from inferwatch.model import SimulatedClock
>>> h = PipelineHandles.of(Pipeline(BaseAlertingConfig(), clock=SimulatedClock(100.0)))
>>> h.silences.list(), h.alerts.alerts(), h.acks.clock.now()
([], [], 100.0)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inferwatch.alerting._notification import AlertGroup, fingerprint
from inferwatch.alerting._pipeline import Pipeline
from inferwatch.alerting._records import NotificationRecord
from inferwatch.alerting._route import AlertView, Route
from inferwatch.alerting.actions import Action, ActionRecord
from inferwatch.alerting.mute import Silence
from inferwatch.alerting.notify import tencent_call_report
from inferwatch.alerting.oncall import ACK_PURPOSE, Ack, History, group_id
from inferwatch.model import Clock, Matcher
from inferwatch.rules import Alert
from inferwatch.settings import BaseAlertingConfig

__all__ = ["AcksHandle", "AlertsHandle", "PipelineHandles", "SilencesHandle"]


class SilencesHandle:
    """List, read, create and expire silences (the API v2 silence routes)."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._p = pipeline
        self.clock: Clock = pipeline.clock

    def list(self) -> list[Silence]:
        """Every silence kept (active, pending and recently expired)."""
        return self._p.silences.list()

    def get(self, sid: str) -> Silence | None:
        """The silence with id ``sid``, or ``None``."""
        return self._p.silences.get(sid)

    def set(self, silence: Silence, now: float) -> Silence:
        """Create or update ``silence``; the stored one."""
        return self._p.silences.set(silence, now)

    def expire(self, sid: str, now: float) -> None:
        """Expire the silence ``sid`` at ``now``."""
        self._p.silences.expire(sid, now)


def _no_cluster() -> dict[str, Any]:
    return {"peers": [], "status": "disabled"}


class AlertsHandle:
    """Alerts in (webhook, API v2), and what the pipeline holds and did with them, out."""

    def __init__(self, pipeline: Pipeline, cluster: Callable[[], dict[str, Any]] | None = None) -> None:
        self._p = pipeline
        self.clock: Clock = pipeline.clock
        self.cluster: Callable[[], dict[str, Any]] = cluster or _no_cluster
        """The API v2 status's ``cluster``: this replica and its peers (an HA pair), or disabled."""

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Hand ``alerts`` to the pipeline, as the evaluator does."""
        self._p.send(alerts, now)

    def view(self, now: float) -> list[AlertView]:
        """Every alert with its routes' receivers and whether it is muted (the API v2 view)."""
        return self._p.view(now)

    def alerts(self) -> list[Alert]:
        """The alerts the pipeline holds (firing, and resolved ones not yet forgotten)."""
        return list(self._p.alerts.values())

    @property
    def config(self) -> BaseAlertingConfig:
        """The ``alerting`` section in force."""
        return self._p.config

    @property
    def root(self) -> Route:
        """The route tree in force."""
        return self._p.root

    @property
    def actions(self) -> Sequence[Action]:
        """The actions configured."""
        return self._p.act.actions

    def notifications(self) -> list[NotificationRecord]:
        """The recent notification attempts, oldest first."""
        return list(self._p.records.recent())

    def action_records(self) -> list[ActionRecord]:
        """The recent action runs, oldest first."""
        return list(self._p.act.records())

    def delivered_as(self, receiver: str) -> str:
        """How ``receiver`` delivers: ``sent``, or e.g. ``printed (no credentials)``."""
        return str(getattr(self._p.notifiers.get(receiver), "delivered_as", "sent"))

    def silences(self) -> list[Silence]:
        """Every silence kept."""
        return self._p.silences.list()

    def inhibited(self, labels: Mapping[str, str], now: float) -> bool:
        """Whether something other than a silence (an inhibition, a mute interval) mutes ``labels``."""
        return any(m.mutes(labels, now) for m in self._p.mute.muters if m is not self._p.silences)

    def acked(self, now: float) -> dict[str, list[Ack]]:
        """The acknowledgements holding for each alert (by fingerprint)."""
        out: dict[str, list[Ack]] = {}
        for g in self._p.groups(now):
            if (ack := self._p.acks.get(g.key, now)) is not None:
                for a in g.alerts:
                    out.setdefault(fingerprint(a), []).append(ack)
        return out

    def digests(self, now: float) -> list[dict[str, Any]]:
        """Each digest receiver: when it is due, how many alerts it holds and its text so far."""
        return [{"name": name, "due": d.due, "pending": d.pending(), "lines": list(d.build(now).notes)}
                for name, d in sorted(self._p.digests.items())]


class AcksHandle:
    """Acknowledge and release alert groups, their states and history (the on-call API)."""

    def __init__(self, pipeline: Pipeline) -> None:
        self._p = pipeline
        self.clock: Clock = pipeline.clock

    def acknowledge(self, now: float, by: str, comment: str = "", *, gid: str = "",
                    matchers: Sequence[Matcher] = (), expires_at: float | None = None,
                    tell: bool = False) -> list[Ack]:
        """Acknowledge firing groups by id or matchers (``InputError`` when none matches); ``tell``: and
        send the acknowledgement to every receiver their escalation paged."""
        return self._p.acknowledge(now, by, comment, gid=gid, matchers=matchers, expires_at=expires_at,
                                   tell=tell)

    def unacknowledge(self, now: float, by: str, *, gid: str = "",
                      matchers: Sequence[Matcher] = ()) -> list[Ack]:
        """End acknowledgements; due escalation steps go out at once."""
        return self._p.unacknowledge(now, by, gid=gid, matchers=matchers)

    def link_group(self, params: Mapping[str, str], now: float, purpose: str = ACK_PURPOSE) -> str:
        """The id of the group a signed link for ``purpose`` holds for at ``now`` (``LinkRefused``
        saying why not)."""
        live = {group_id(g.key): g.key for g in self._p.groups(now)}
        return group_id(self._p.ack_links.verify(params, live, now, purpose))

    def link_for(self, params: Mapping[str, str], purpose: str, now: float,
                 source: str = ACK_PURPOSE) -> dict[str, str]:
        """A valid link's claims (for ``source``) signed for another of ``LINK_ACTIONS``."""
        return self._p.ack_links.for_purpose(params, purpose, now, source)

    def escalate(self, gid: str, now: float, why: str) -> int | None:
        """Send group ``gid``'s next escalation step now (``None``: acknowledged, muted or none left)."""
        key = next((g.key for g in self._p.groups(now) if group_id(g.key) == gid), None)
        return None if key is None else self._p.hurry(key, now, why)

    def voice_callback(self, body: object) -> bool | None:
        """A voice platform's status callback: whether a waiting call took it (``None``: not one)."""
        found = tencent_call_report(body)
        return None if found is None else self._p.calls.report(*found)

    def group_states(self, now: float) -> list[dict[str, object]]:
        """Each group with its receiver, acknowledgement and escalation."""
        return self._p.group_states(now)

    def groups(self, now: float) -> list[AlertGroup]:
        """The live alert groups."""
        return self._p.groups(now)

    @property
    def history(self) -> History:
        """The on-call history (events, response times)."""
        return self._p.oncall.history

    @property
    def config(self) -> BaseAlertingConfig:
        """The ``alerting`` section in force (its ``oncall`` schedules)."""
        return self._p.config


@dataclass(frozen=True)
class PipelineHandles:
    """The three handles on one pipeline, as the server's wiring hands them to the API."""

    silences: SilencesHandle
    alerts: AlertsHandle
    acks: AcksHandle

    @classmethod
    def of(cls, pipeline: Pipeline, cluster: Callable[[], dict[str, Any]] | None = None) -> PipelineHandles:
        """The handles on ``pipeline``; ``cluster``: the HA pair's status (default: disabled)."""
        return cls(SilencesHandle(pipeline), AlertsHandle(pipeline, cluster), AcksHandle(pipeline))
