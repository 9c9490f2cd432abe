"""The notification pipeline on replay's simulated time, with recorders for receivers and actions.

A test file may carry silences under its ``inferwatch:`` key::

    inferwatch:
      silences:
        - {at: 10m, duration: 1h, matchers: ['service="ranker"'], created_by: ops, comment: deploy}
        - {at: 0s, duration: 2h, matchers: ['alertname="Drift"'], expire_at: 30m}

and acknowledgements (of the firing groups with a matching alert at ``at``)::

    inferwatch:
      acks:
        - {at: 7m, matchers: ['alertname="ServiceUnavailable"'], by: ops, comment: on it}
        - {at: 3m, matchers: ['tier="P0"'], by: ops, unack_at: 20m}

and whether each confirmed phone call is answered, per number in turn (after the list: not answered)::

    inferwatch:
      calls: {"13800000000": [no, yes]}

A voice receiver with ``confirm`` then "calls" each number of its ``to`` through the
pipeline's ``CallWatch`` with its own ``rounds`` and ``round_interval``: the same rounds,
acknowledgement and early escalation as ``serve``, on simulated time.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from inferwatch._exceptions import InputError
from inferwatch.alerting._notification import Notification, Notifier
from inferwatch.alerting._pipeline import Pipeline
from inferwatch.alerting._records import NotificationRecord
from inferwatch.alerting.actions import ActionRecord, recording_action
from inferwatch.alerting.mute import Silence
from inferwatch.alerting.notify import RecordingNotifier
from inferwatch.alerting.oncall import Call, CallOutcome, CallWatch
from inferwatch.model import Clock, Matcher, SimulatedClock, parse_duration, parse_matchers
from inferwatch.rules import Alert
from inferwatch.settings import (
    AliyunVoiceReceiverSpec,
    BaseAlertingConfig,
    ReceiverBase,
    TencentVoiceReceiverSpec,
)

__all__ = ["ReplayPipeline"]


@dataclass(frozen=True, slots=True)
class _PlannedSilence:
    at: float
    silence: Silence
    expire_at: float | None


@dataclass(frozen=True, slots=True)
class _PlannedAck:
    at: float
    matchers: tuple[Matcher, ...]
    by: str
    comment: str
    unack_at: float | None


def _plan_acks(extensions: Mapping[str, Any]) -> list[_PlannedAck]:
    raw = extensions.get("acks", []) if isinstance(extensions, Mapping) else []
    if not isinstance(raw, list):
        raise InputError("inferwatch.acks: expected a list")
    out = []
    for i, a in enumerate(raw):
        where = f"inferwatch.acks[{i}]"
        if not isinstance(a, Mapping):
            raise InputError(f"{where}: expected a mapping")
        try:
            ms = tuple(m for t in a.get("matchers", []) for m in parse_matchers(str(t)))
        except ValueError as exc:
            raise InputError(f"{where}.matchers: {exc}") from None
        if not ms:
            raise InputError(f"{where}.matchers: at least one matcher is needed")
        unack = _dur(a["unack_at"], f"{where}.unack_at") if "unack_at" in a else None
        out.append(_PlannedAck(_dur(a.get("at", 0), f"{where}.at"), ms, str(a.get("by", "replay")),
                               str(a.get("comment", "")), unack))
    return out


def _dur(value: Any, where: str) -> float:
    try:
        return 0.0 if value in (0, "0") else parse_duration(str(value))
    except ValueError as exc:
        raise InputError(f"{where}: {exc}") from None


def _plan(extensions: Mapping[str, Any]) -> list[_PlannedSilence]:
    raw = extensions.get("silences", []) if isinstance(extensions, Mapping) else []
    if not isinstance(raw, list):
        raise InputError("inferwatch.silences: expected a list")
    out = []
    for i, s in enumerate(raw):
        where = f"inferwatch.silences[{i}]"
        if not isinstance(s, Mapping):
            raise InputError(f"{where}: expected a mapping")
        at = _dur(s.get("at", 0), f"{where}.at")
        duration = _dur(s.get("duration", "1h"), f"{where}.duration")
        try:
            silence = Silence.new(list(s.get("matchers", [])), at, at + duration,
                                  str(s.get("created_by", "replay")), str(s.get("comment", "replay")))
        except InputError as exc:
            raise InputError(f"{where}: {exc}") from None
        expire = _dur(s["expire_at"], f"{where}.expire_at") if "expire_at" in s else None
        out.append(_PlannedSilence(at, silence, expire))
    return out


def plan_calls(extensions: Mapping[str, Any]) -> dict[str, list[bool]]:
    """The file's ``inferwatch.calls``: per number, whether each call is answered."""
    raw = extensions.get("calls", {}) if isinstance(extensions, Mapping) else {}
    if not isinstance(raw, Mapping):
        raise InputError("inferwatch.calls: expected a mapping of number to a list of yes/no")
    words = {True: True, False: False, "yes": True, "no": False}
    out = {}
    for number, answers in raw.items():
        if not isinstance(answers, list) or not all(isinstance(a, bool | str) and a in words
                                                    for a in answers):
            raise InputError(f"inferwatch.calls[{number!r}]: expected a list of yes/no (answered or not)")
        out[str(number)] = [words[a] for a in answers]
    return out


def confirming(spec: ReceiverBase) -> TypeGuard[AliyunVoiceReceiverSpec | TencentVoiceReceiverSpec]:
    """Whether ``spec`` is a voice receiver that asks whether its calls were answered."""
    return isinstance(spec, AliyunVoiceReceiverSpec | TencentVoiceReceiverSpec) and spec.confirm


class ScriptedPhone:
    """A confirming voice receiver whose calls are answered per the script (``calls`` after the pipeline)."""

    def __init__(self, spec: AliyunVoiceReceiverSpec | TencentVoiceReceiverSpec,
                 script: Mapping[str, list[bool]], clock: Clock) -> None:
        if not spec.to:
            raise InputError(f"receiver {spec.name!r}: replay calls the numbers in 'to' (it has none)")
        self.name = f"{spec.type}[{spec.name}]"
        self._spec, self._clock = spec, clock
        self._script = {k: list(v) for k, v in script.items()}
        self._answers: dict[str, bool] = {}
        self._ids = itertools.count(1)
        self.calls: CallWatch | None = None
        self.placed: list[dict[str, Any]] = []  # every call: t, number, round, answered

    def notify(self, n: Notification) -> None:
        """Call every number of ``to``."""
        for number in self._spec.to:
            call_id = self._dial(number, 1)
            if self.calls is not None and n.groups and n.groups[0].firing():
                self.calls.placed(Call(self.name, number, call_id, tuple(g.key for g in n.groups),
                                       self._clock.now(), self, rounds=self._spec.rounds,
                                       interval=self._spec.round_interval))

    def redial(self, call: Call) -> str:
        """The same number again."""
        return self._dial(call.number, call.round + 1)

    def outcome(self, call: Call) -> CallOutcome:
        """Answered or not, as scripted for that call."""
        answered = self._answers.get(call.call_id, False)
        return CallOutcome("answered" if answered else "unanswered",
                           {"scripted": "yes" if answered else "no"})

    def _dial(self, number: str, round_: int) -> str:
        call_id = f"replay-{next(self._ids)}"
        queue = self._script.get(number, [])
        self._answers[call_id] = queue.pop(0) if queue else False
        self.placed.append({"t": self._clock.now(), "number": number, "round": round_,
                            "answered": self._answers[call_id]})
        return call_id


class ReplayPipeline:
    """An ``AlertSink`` for ``run_replay``: a fresh pipeline per test group, ticked at every due time."""

    def __init__(self, config: BaseAlertingConfig, extensions: Mapping[str, Any] | None = None) -> None:
        self.config = config
        self.silences = _plan(extensions or {})
        self.planned_acks = _plan_acks(extensions or {})
        self.script = plan_calls(extensions or {})
        self.calls: list[dict[str, Any]] = []
        self.acks: list[dict[str, Any]] = []
        self.notifications: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        self._pipeline: Pipeline | None = None
        self._last = -1.0
        self._applied: set[tuple[int, str]] = set()

    def _fresh(self) -> Pipeline:
        clock = SimulatedClock(0.0)
        phones = {r.name: ScriptedPhone(r, self.script, clock) for r in self.config.effective_receivers()
                  if confirming(r)}
        recs: dict[str, Notifier] = {r.name: phones.get(r.name) or RecordingNotifier(r.name)
                                     for r in self.config.effective_receivers()}
        acts = [recording_action(a) for a in self.config.effective_actions()]
        p = Pipeline(self.config, clock=clock, notifiers=recs, actions=acts)
        for phone in phones.values():
            phone.calls = p.calls
            phone.placed = self.calls  # every call of every run, in order
        p.subscribe(self._record)
        self._applied = set()
        return p

    def _record(self, rec: NotificationRecord | ActionRecord) -> None:
        if isinstance(rec, NotificationRecord):
            if rec.status == "sent":
                self.notifications.extend(rec.entries())
        else:
            self.actions.append({"t": rec.t, "action": rec.action, "alertname": rec.alertname,
                                 "labels": rec.labels, "phase": rec.phase, "outcome": rec.outcome})

    def _at(self, now: float) -> Pipeline:
        if self._pipeline is None or now < self._last:
            self._pipeline = self._fresh()
            self._last = 0.0
        self._drain(self._pipeline, now, inclusive=False)
        self._last = now
        return self._pipeline

    def _drain(self, p: Pipeline, until: float, *, inclusive: bool) -> None:
        for _ in range(100_000):
            times = [w for w in (p.next_wakeup(), self._next_silence(until)) if w is not None]
            nxt = min(times, default=None)
            if nxt is None or nxt > until or (nxt == until and not inclusive):
                return
            nxt = max(nxt, self._last)
            assert isinstance(p.clock, SimulatedClock)
            p.clock.set(nxt)
            self._apply_silences(p, nxt)
            p.tick(nxt)
            self._last = nxt

    def _next_silence(self, until: float) -> float | None:
        due = [t for i, s in enumerate(self.silences)
               for t, kind in ((s.at, "add"), (s.expire_at, "expire"))
               if t is not None and (i, kind) not in self._applied and t <= until]
        due += [t for i, a in enumerate(self.planned_acks)
                for t, kind in ((a.at, "ack"), (a.unack_at, "unack"))
                if t is not None and (i, kind) not in self._applied and t <= until]
        return min(due, default=None)

    def _apply_acks(self, p: Pipeline, now: float) -> None:
        for i, a in enumerate(self.planned_acks):
            for t, kind in ((a.at, "ack"), (a.unack_at, "unack")):
                if t is None or t > now or (i, kind) in self._applied:
                    continue
                self._applied.add((i, kind))
                try:
                    if kind == "ack":
                        done = p.acknowledge(now, a.by, a.comment, matchers=a.matchers)
                    else:
                        done = p.unacknowledge(now, a.by, matchers=a.matchers)
                except InputError:
                    done = []  # nothing firing matched at that time: shown as no groups
                self.acks.append({"t": now, "action": kind, "by": a.by, "groups": len(done)})

    def _apply_silences(self, p: Pipeline, now: float) -> None:
        self._apply_acks(p, now)
        for i, s in enumerate(self.silences):
            if s.at <= now and (i, "add") not in self._applied:
                self._applied.add((i, "add"))
                p.silences.add(s.silence, now)
            if s.expire_at is not None and s.expire_at <= now and (i, "expire") not in self._applied:
                self._applied.add((i, "expire"))
                current = p.silences.get(s.silence.id)
                if current is not None and current.state(now) != "expired":
                    p.silences.expire(s.silence.id, now)

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """The evaluator's alerts at simulated ``now``."""
        p = self._at(now)
        assert isinstance(p.clock, SimulatedClock)
        p.clock.set(max(now, p.clock.now()))
        self._apply_silences(p, now)
        p.send(alerts, now)

    def evaluated(self, ts: float, clock: object = None) -> None:
        """``run_replay``'s ``on_evaluated``: run everything due up to ``ts``."""
        p = self._at(ts)
        self._drain(p, ts, inclusive=True)

    def finish(self, until: float) -> None:
        """Run the last group on to ``until`` (e.g. a digest after the last evaluation)."""
        if self._pipeline is not None:
            self._drain(self._pipeline, until, inclusive=True)

    def extra(self) -> dict[str, Any]:
        """The replay JSON's ``notifications``, ``actions``, and ``acks`` and ``calls`` when there are any."""
        out = {"notifications": list(self.notifications), "actions": list(self.actions)}
        if self.planned_acks:
            out["acks"] = list(self.acks)
        if self.calls or self.script:
            out["calls"] = list(self.calls)
        return out
