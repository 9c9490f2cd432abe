"""The notification pipeline: the ``AlertSink`` the evaluator sends to, driven by ``tick(now)``.

    dispatch (route, group) -> mute (inhibitions, silences) -> actions -> dedup -> enqueue
      outbox -> per-receiver queue (attempt with timeout, retry, rate limit) -> record
      actions: ledger claim -> run with the action's timeout -> record, outcome notes

Grouping, muting and dedup run on the tick, deterministically; sending and actions run on the
executor (inline for replay and tests, a thread per attempt or run in the server), so a hanging
receiver or action delays only itself. The evaluator's ``send`` only records and wakes the runner.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, replace
from functools import partial
from typing import TextIO

from inferwatch.alerting._alertstore import carry_peak
from inferwatch.alerting._builder import PipelineBuilder, Stages, Stores
from inferwatch.alerting._delivery import CommittedExecutor, Executor, InlineExecutor, QueueStats
from inferwatch.alerting._dispatch import Dispatcher
from inferwatch.alerting._health import NOTIFICATIONS_FAILING, ReceiverHealth, about_receiver
from inferwatch.alerting._hooks import Hooks
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import AlertGroup, Notification, Notifier, fingerprint
from inferwatch.alerting._records import NotificationRecord
from inferwatch.alerting._route import AlertView, Route
from inferwatch.alerting._stages import EnqueueStage
from inferwatch.alerting._state import StateDB, StateStore
from inferwatch.alerting.actions import Action, ActionRecord
from inferwatch.alerting.mute import SilencedResolutions, TimeIntervals
from inferwatch.alerting.oncall import (
    Ack,
    AckLinks,
    CallOutcomes,
    CallWatch,
    EpisodeIds,
    Escalator,
    History,
    OnCall,
    group_state,
    stands_for,
)
from inferwatch.model import Clock, Matcher, SystemClock, matches_all
from inferwatch.rules import Alert
from inferwatch.settings import BaseAlertingConfig

__all__ = ["Pipeline"]

log = logging.getLogger("inferwatch.alerting")
RESOLVED_RETENTION_S = 3600.0  # resolved alerts are forgotten after this
GC_EVERY_S = 60.0  # the sweep is O(alerts): not on every tick of a storm
_ACTIONS_ONLY = "\x00actions"  # an escalating group's action runs: no receiver
NFLOG_RETENTION_S = 5 * 86400.0  # Alertmanager keeps its notification log 120 h


@dataclass(frozen=True, slots=True)
class _Assembly:
    """The parts one ``alerting`` section makes (built first, then applied in one step)."""

    config: BaseAlertingConfig
    http: HttpClient
    stages: Stages
    root: Route
    history: History


class Pipeline:
    """Routes, groups, mutes, notifies and acts; state in ``db`` survives restarts (or is shared: HA).

    >>> from inferwatch.alerting import RecordingNotifier
    >>> from inferwatch.model import Labels
    >>> rec = RecordingNotifier("terminal")
    >>> p = Pipeline(BaseAlertingConfig(), notifiers={"terminal": rec})
    >>> p.send([Alert(Labels({"alertname": "Up"}), starts_at=0.0)], now=0.0)
    >>> p.tick(30.0); len(rec.sent)
    1
    """

    def __init__(
        self, config: BaseAlertingConfig, *, db: StateStore | None = None, clock: Clock | None = None,
        notifiers: Mapping[str, Notifier] | None = None, actions: Sequence[Action] | None = None,
        external_url: str = "", http: HttpClient | None = None, rng: random.Random | None = None,
        stream: TextIO | None = None, warn: Callable[[str], None] | None = None,
        executor: Executor | None = None, ack_key: bytes | None = None,
    ) -> None:
        """``executor``: how attempts run (default inline); ``ack_key`` signs acknowledgement links."""
        self.clock, self.db = clock or SystemClock(), db or StateDB(":memory:")
        self.external_url, self._given_http, self._ack_key = external_url, http, ack_key
        self.calls = CallWatch(wake=self._wake, now=self.clock.now)  # confirmed calls (across reloads)
        self._builder = partial(  # the same seams for every ``alerting`` section
            PipelineBuilder, rng=rng or random.Random(),
            executor=CommittedExecutor(executor or InlineExecutor(), self.db),
            external_url=external_url, stream=stream, warn=warn, notifiers=notifiers, actions=actions,
            calls=self.calls, clock=self.clock)
        self._lock = threading.RLock()  # sends start after it is released (ThreadExecutor.held)
        self._starts = getattr(executor, "held", nullcontext)
        self._listeners: list[Callable[[NotificationRecord | ActionRecord], None]] = []
        self._waker: Callable[[], None] = lambda: None
        self._driven = False  # a runner ticks (set_waker(runner=True)): send only records
        self.delivering: Callable[[], bool] = lambda: True  # an HA follower records, and sends nothing
        self._last_gc = float("-inf")
        self._stores = stores = Stores.open(self.db)
        self.nflog, self.silences, self.records, self.outbox = (
            stores.nflog, stores.silences, stores.records, stores.outbox)
        self._alert_store, self.acks, self.episode_ids = stores.alerts, stores.acks, EpisodeIds(self.db)
        self.alerts: dict[str, Alert] = self._alert_store.load()
        self._updated: dict[str, float] = {}  # when each alert was last received (this run)
        self._apply(self._assemble(config))

    def reconfigure(self, config: BaseAlertingConfig) -> None:
        """Apply a changed ``alerting`` section without a restart (a config reload): everything the
        config shapes is built new first (a bad section raises and changes nothing); the state carries
        on as across a restart: owed notifications go out through the new queues."""
        with self._lock:
            now = self.clock.now()
            for q in self.queues.values():  # what finished is recorded by the queue that started it
                q.collect(now)
            self.act.collect(now)
            old_http = self._http
            self._apply(self._assemble(config))
        if old_http is not self._http:
            old_http.close()

    def _assemble(self, config: BaseAlertingConfig) -> _Assembly:
        """Every part the config shapes, built without touching the running ones."""
        http = self._given_http or HttpClient(timeout=config.notify.timeout)
        try:
            stages = self._builder(config, http=http).build(
                self._stores, self.alerts.values(), Hooks(self), self._emit, self._wake, self.clock.now())
            root = Route.build(config.route)
            history = History(self.db, config.history.retention, config.history.max_events)
        except BaseException:
            if http is not self._given_http:
                http.close()
            raise
        return _Assembly(config, http, stages, root, history)

    def _apply(self, a: _Assembly) -> None:
        config, stages = a.config, a.stages
        self.config, self._http, self.root = config, a.http, a.root
        self.health = ReceiverHealth(config.notify.failing_after)
        self.ack_links = AckLinks(self.external_url, self._ack_key, self.episode_ids)
        self.inhibitor, self.mute, self.act = stages.inhibitor, stages.mute, stages.act
        self.notifiers, self.queues, self.chains, self.digests = (
            stages.notifiers, stages.queues, stages.chains, stages.digests)
        self.dispatcher = Dispatcher(self.root, self._flush, TimeIntervals(config.time_intervals))
        self.oncall = OnCall(self.acks, a.history, self.groups, self.episode_ids)
        self._swallowed = SilencedResolutions(self.silences, self.nflog, list(self.chains))
        self.escalator = Escalator(config, self.db, self.acks, self.mute,
                                   {name: self._update for name in self.chains}, self._send_step,
                                   self._live_group, self.oncall.escalated)
        self.calls.bind(CallOutcomes(self.oncall, self.escalator, self._live_group))
        self.dispatcher.put(self.alerts.values(), self.clock.now())

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Take firing and resolved alerts (evaluator, webhook) and flush what is due, waiting for no
        send; once a runner drives the pipeline it only records the alerts and wakes the runner."""
        with self._starts(), self._lock:
            self._put([self._normalise(a, now) for a in alerts], now)
            if not self._driven:  # no runner (replay, tests, the demo): flush what is due now
                self._tick(now)
        if self._driven:  # the runner ticks: the evaluator never waits for a flush or an action
            self._wake()

    def _put(self, fresh: list[Alert], now: float) -> None:
        fresh = [carry_peak(self.alerts.get(fingerprint(a)), a, now) for a in fresh]  # persisted below
        with self.db.transaction():  # the history's events and the alerts: one commit per batch
            self.oncall.received(self.alerts, fresh, now)
            self._swallowed.fired(fresh, now)
            self.alerts.update(fps := {fingerprint(a): a for a in fresh})
            self._updated.update(dict.fromkeys(fps, now))
            self.inhibitor.update(fresh)
            self._alert_store.put(fresh, now)
        self.dispatcher.put(fresh, now)

    def _normalise(self, a: Alert, now: float) -> Alert:
        # Like Alertmanager: an alert without an end resolves unless resent within resolve_timeout.
        if a.ends_at is None:
            return Alert(a.labels, a.annotations, a.starts_at, now + self.config.resolve_timeout,
                         a.value, a.generator_url)
        return a

    def acknowledge(self, now: float, by: str, comment: str = "", *, gid: str = "",
                    matchers: Sequence[Matcher] = (), expires_at: float | None = None,
                    tell: bool = False) -> list[Ack]:
        """Acknowledge firing groups by id or matchers (``InputError`` when none matches); ``tell``: and
        say so to every receiver their escalation paged (the incident page, the API and the CLI)."""
        with self._lock:
            acks = self.oncall.acknowledge(now, by, comment, gid=gid, matchers=matchers,
                                           expires_at=expires_at)
            for a in acks if tell else ():
                self.escalator.acknowledged(a.group_key, a.note(), now)
            return acks

    def unacknowledge(self, now: float, by: str, *, gid: str = "",
                      matchers: Sequence[Matcher] = ()) -> list[Ack]:
        """End acknowledgements; due escalation steps go out at once."""
        with self._starts(), self._lock:
            out = self.oncall.unacknowledge(now, by, gid=gid, matchers=matchers)
            self._tick(now)
            return out

    def pending(self, labels: Sequence[Mapping[str, str]], now: float) -> None:
        """The evaluator's newly pending alerts, for the history (the evaluator's ``on_pending``)."""
        try:
            self.oncall.pending(labels, now)
        except Exception:  # the history must not break evaluation
            log.exception("recording pending alerts failed")

    def tick(self, now: float) -> None:
        """Flush due groups, judge and start sends, deliver digests, forget old state."""
        with self._starts(), self._lock:
            self._tick(now)

    def _tick(self, now: float) -> None:
        if not self.delivering():
            return
        self.calls.tick(now)  # before the tick's commit (it asks a platform): an answer acknowledges
        # The server's tick is one commit; sends and actions start after it (CommittedExecutor).
        with self.db.transaction() if self._driven else nullcontext():
            if len(self._swallowed):  # a silence ended on alerts that resolved under it: tell who heard them
                self.dispatcher.put(self._swallowed.due(now), now)
            self.dispatcher.tick(now)
            self.escalator.tick(now)
            self.act.release(_ACTIONS_ONLY, now)  # an escalating route's action runs: recorded, nothing sent
            for chain in self.chains.values():
                chain.tick(now)
            for q in self.queues.values():
                q.tick(now)
            self._gc(now)

    def refresh(self, *, following: bool = False, taking_over: float | None = None) -> None:
        """Read what an HA peer wrote (every round): silences, acknowledgements, episode ids; a follower
        also the log and escalations; one taking over (at ``taking_over``) its outbox and digests too."""
        for store in (self.silences, self.acks, self.episode_ids):  # swapped whole: no lock needed
            store.reload()
        if following or taking_over is not None:
            with self._lock:
                self.nflog.reload()
                self.escalator.reload()
                self.outbox.reload(changed_only=taking_over is None)  # a follower too: it may fail open
                if taking_over is not None:
                    for digest in self.digests.values():
                        digest.reload(taking_over)

    def settle(self, now: float) -> None:
        """Record the sends that have finished, start nothing (before a shutdown)."""
        with self._lock:
            for q in self.queues.values():
                q.collect(now)
            self.act.collect(now)

    def hurry(self, key: str, now: float, why: str) -> int | None:
        """Send group ``key``'s next escalation step now (``None``: acknowledged, muted or none left)."""
        with self._lock:  # the runner wakes to send what the step queued once this lock is free
            self._wake()
            return self.escalator.hurry(key, now, why)

    def next_wakeup(self) -> float | None:
        """The earliest time ``tick`` has something to do."""
        with self._lock:
            times = [self.dispatcher.next_wakeup(), self.escalator.next_wakeup(), self.calls.next_wakeup(),
                     self._swallowed.next_check(), *(d.due for d in self.digests.values()),
                     *(q.next_wakeup() for q in self.queues.values()), self.act.next_wakeup()]
            return min((t for t in times if t is not None), default=None)

    def set_waker(self, fn: Callable[[], None], *, runner: bool = False) -> None:
        """``fn`` is called (from any thread) when a send or an action finishes, so the runner ticks soon;
        ``runner``: a runner ticks the pipeline, so ``send`` only records the alerts and calls ``fn``."""
        self._waker, self._driven = fn, runner

    def _wake(self) -> None:
        self._waker()

    def queue_stats(self, now: float) -> list[QueueStats]:
        """Per receiver: notifications owed and the age of the oldest (the self-metrics)."""
        with self._lock:
            return [q.stats(now) for q in self.queues.values()]

    def view(self, now: float) -> list[AlertView]:
        """Every alert not ended by ``now``, its routes and mutes (API v2); only a snapshot under the lock."""
        with self._lock:
            held = [(a, self._updated.get(fp, a.starts_at), tuple(self.inhibitor.inhibited_by(a.labels, now)))
                    for fp, a in self.alerts.items() if a.ends_at is None or a.ends_at >= now]
        active = self.silences.active(now)
        return [AlertView(a, updated, tuple(self.root.match(a.labels)), tuple(sorted(
            s.id for s in active if matches_all(s.matchers, a.labels))), inhibitors)
            for a, updated, inhibitors in held]

    def _flush(self, route: Route, group: AlertGroup, now: float) -> None:
        g = AlertGroup(group.key, group.labels, group.alerts, now, route.options.repeat_interval)
        receiver = route.options.receiver
        own = tuple(a for a in g.alerts if not about_receiver(a, receiver))
        if len(own) < len(g.alerts):  # never tell a failing receiver that it fails
            fallback = self.config.notify.fallback_receiver
            moved = replace(g, alerts=tuple(a for a in g.alerts if about_receiver(a, receiver)))
            if fallback != receiver and fallback in self.chains:
                self.chains[fallback].process(Notification(fallback, (moved,)), now)
            else:
                log.error("%s about receiver %s has nowhere else to go", NOTIFICATIONS_FAILING, receiver)
            g = replace(g, alerts=own)
        if not g.alerts:
            return
        self.oncall.flushed(g, self.inhibitor, self.silences, now)
        if self.config.resolved_after_silence:
            self._swallowed.flushed(g, now)
        if route.options.escalation:
            self._act_only(g, now)  # the steps notify; the route's actions run at the flush as anywhere
            self.escalator.flush(route.options.escalation, g, now)
        else:
            note = stands_for(g, self.alerts.values(), self.inhibitor, self.mute.muters, now)
            self._update(Notification(receiver, (g,), (note,) if note else ()), now)
        if not g.firing():
            self.oncall.resolved(g.key)

    def _update(self, n: Notification, now: float) -> None:
        acks = [a for g in n.groups if (a := self.acks.get(g.key, now)) is not None]
        n = n.with_notes(*(f"Acknowledged by {a.by}" + (f": {a.comment}" if a.comment else "") for a in acks))
        self.chains[n.receiver].process(n if acks else self.ack_links.add(n, now), now)

    def _act_only(self, g: AlertGroup, now: float) -> None:
        unmuted = self.mute.process(Notification(_ACTIONS_ONLY, (g,)), now)
        if unmuted is not None:
            self.act.process(unmuted, now)  # held while runs go on, then dropped in _tick

    def _send_step(self, n: Notification, now: float) -> None:
        n = self.ack_links.add(n, now)
        if n.receiver in self.queues:  # a step is sent as such: no dedup against the group's updates
            EnqueueStage(self.outbox, self.queues[n.receiver]).process(n, now)
        else:
            self.chains[n.receiver].process(n, now)

    def _live_group(self, key: str, now: float) -> AlertGroup | None:
        group = self.dispatcher.groups.get(key)
        return None if group is None else replace(group.snapshot(now),
                                                  repeat_interval=group.route.options.repeat_interval)

    def groups(self, now: float) -> list[AlertGroup]:
        """The aggregation groups now (for acknowledgements, the API and the dashboard)."""
        with self._lock:  # the ticking thread changes them
            return [replace(g.snapshot(now), repeat_interval=g.route.options.repeat_interval)
                    for g in self.dispatcher.groups.values()]

    def group_states(self, now: float) -> list[dict[str, object]]:
        """Each group with its receiver, acknowledgement and escalation (the on-call API's view)."""
        with self._lock:
            return [group_state(agg.snapshot(now), agg.route.options.receiver, self.acks.get(agg.key, now),
                                self.escalator.episodes.get(agg.key))
                    for agg in self.dispatcher.groups.values()]

    def _record(self, rec: NotificationRecord) -> None:
        self.records.add(rec)
        self._emit(rec)

    def _emit(self, rec: NotificationRecord | ActionRecord) -> None:
        try:
            if isinstance(rec, NotificationRecord):
                self.oncall.notified(rec)
            else:
                self.oncall.acted(rec)
        except Exception:  # the history must not break delivery
            log.exception("recording history failed")
        for fn in self._listeners:
            try:
                fn(rec)
            except Exception:  # a listener must not break delivery
                log.exception("record listener failed")

    def subscribe(self, fn: Callable[[NotificationRecord | ActionRecord], None]) -> None:
        """Call ``fn`` with every notification and action record (the demo's terminal view)."""
        self._listeners.append(fn)

    def _gc(self, now: float) -> None:
        if now - self._last_gc < GC_EVERY_S:
            return
        self._last_gc = now
        old = [fp for fp, a in self.alerts.items()
               if a.ends_at is not None and a.ends_at < now - RESOLVED_RETENTION_S]
        if old:
            self._alert_store.delete(old)
            self.inhibitor.forget(old)
            for fp in old:
                del self.alerts[fp]
                self._updated.pop(fp, None)
            self.nflog.gc(now - NFLOG_RETENTION_S)

    def close(self) -> None:
        """Close the HTTP client and the state file."""
        self._http.close()
        self.db.close()
