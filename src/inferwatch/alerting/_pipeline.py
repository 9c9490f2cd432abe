"""The notification pipeline: the ``AlertSink`` the evaluator sends to, driven by ``tick(now)``.

    dispatch (route, group) -> mute (inhibitions, silences) -> actions -> dedup -> enqueue
      outbox -> per-receiver queue (attempt with timeout, retry, rate limit) -> record

Grouping, muting and dedup run on the tick, deterministically; sending runs on
the executor (inline for replay and tests, a thread per attempt in the server),
so a hanging receiver delays only itself.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from inferwatch.alerting._actions import Action, ActionRecord, ActionStage
from inferwatch.alerting._alertstore import AlertStore
from inferwatch.alerting._build import build_action, build_notifier
from inferwatch.alerting._delivery import (
    Executor,
    InlineExecutor,
    QueueStats,
    RateWindow,
    ReceiverQueue,
    RetryPolicy,
    ThreadExecutor,
)
from inferwatch.alerting._digest import DigestStage
from inferwatch.alerting._dispatch import Dispatcher
from inferwatch.alerting._health import NOTIFICATIONS_FAILING, ReceiverHealth
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._inhibit import Inhibitor, InhibitRule
from inferwatch.alerting._ledger import ActionLedger
from inferwatch.alerting._nflog import NotificationLog
from inferwatch.alerting._notification import AlertGroup, Notification, Notifier, fingerprint
from inferwatch.alerting._outbox import Outbox
from inferwatch.alerting._records import NotificationRecord, RecordLog
from inferwatch.alerting._route import Route
from inferwatch.alerting._silence import Silences
from inferwatch.alerting._stages import DedupStage, EnqueueStage, MuteStage, StageChain, needs_update
from inferwatch.alerting._state import StateDB
from inferwatch.config import Config
from inferwatch.config._alerting import AlertingConfig
from inferwatch.config._receivers import DigestReceiverSpec, ReceiverSpec
from inferwatch.model import Clock, SystemClock
from inferwatch.rules import Alert

__all__ = ["ALERTING_STATE_FILE", "Pipeline", "pipeline_from_config"]

log = logging.getLogger("inferwatch.alerting")
RESOLVED_RETENTION_S = 3600.0  # resolved alerts are forgotten after this
GC_EVERY_S = 60.0  # the sweep is O(alerts): not on every tick of a storm
NFLOG_RETENTION_S = 5 * 86400.0  # Alertmanager keeps its notification log 120 h


class Pipeline:
    """Routes, groups, mutes, notifies and acts; state in ``db`` survives restarts.

    >>> from inferwatch.alerting import RecordingNotifier
    >>> from inferwatch.model import Labels
    >>> rec = RecordingNotifier("terminal")
    >>> p = Pipeline(AlertingConfig(), notifiers={"terminal": rec})
    >>> p.send([Alert(Labels({"alertname": "Up"}), starts_at=0.0)], now=0.0)
    >>> p.tick(30.0); len(rec.sent)
    1
    """

    def __init__(
        self, config: AlertingConfig, *, db: StateDB | None = None, clock: Clock | None = None,
        notifiers: Mapping[str, Notifier] | None = None, actions: Sequence[Action] | None = None,
        external_url: str = "", http: HttpClient | None = None, rng: random.Random | None = None,
        stream: TextIO | None = None, warn: Callable[[str], None] | None = None,
        executor: Executor | None = None,
    ) -> None:
        """``executor``: how attempts run (default inline: on the ticking thread)."""
        self.config = config
        self.clock = clock or SystemClock()
        self.db = db or StateDB(":memory:")
        self.external_url = external_url
        self._http = http or HttpClient(timeout=config.notify.timeout)
        self._rng = rng or random.Random()
        self._executor = executor or InlineExecutor()
        self._lock = threading.RLock()
        self._listeners: list[Callable[[NotificationRecord | ActionRecord], None]] = []
        self._waker: Callable[[], None] = lambda: None
        self._last_gc = float("-inf")
        self.nflog = NotificationLog(self.db)
        self.silences = Silences(self.db)
        self.records = RecordLog(self.db)
        self.outbox = Outbox(self.db)
        self.health = ReceiverHealth(config.notify.failing_after)
        self._alert_store = AlertStore(self.db)
        self.alerts: dict[str, Alert] = self._alert_store.load()
        self.inhibitor = Inhibitor([InhibitRule.build(r) for r in config.inhibit_rules], self.alerts.values())
        self.mute = MuteStage([self.inhibitor, self.silences])
        built = actions if actions is not None else [build_action(a, self._http)
                                                     for a in config.effective_actions()]
        self.act = ActionStage(built, ActionLedger(self.db), self._emit, once_per={
            a.name: (a.once_per, a.cooldown) for a in config.effective_actions()})
        self.notifiers: dict[str, Notifier] = {}
        self.queues: dict[str, ReceiverQueue] = {}
        self.chains: dict[str, StageChain] = {}
        self.digests: dict[str, DigestStage] = {}
        self._build_chains(notifiers or {}, stream, warn)
        self.root = Route.build(config.route)
        self.dispatcher = Dispatcher(self.root, self._flush)
        self.dispatcher.put(self.alerts.values(), self.clock.now())

    def _build_chains(self, overrides: Mapping[str, Notifier], stream: TextIO | None,
                      warn: Callable[[str], None] | None) -> None:
        specs = self.config.effective_receivers()
        enqueue: dict[str, EnqueueStage] = {}
        for spec in specs:
            if isinstance(spec, DigestReceiverSpec):
                continue
            notifier = overrides.get(spec.name) or build_notifier(spec, self._http, self.external_url,
                                                                  stream, warn)
            self.notifiers[spec.name] = notifier
            self.queues[spec.name] = self._queue(spec, notifier, rate_limited=spec.name not in overrides)
            enqueue[spec.name] = EnqueueStage(self.outbox, self.queues[spec.name])
            self.chains[spec.name] = StageChain([self.mute, self.act,
                                                 DedupStage(self.nflog, spec.send_resolved),
                                                 enqueue[spec.name]])
        for spec in specs:
            if isinstance(spec, DigestReceiverSpec):
                target = StageChain([enqueue[spec.deliver_to]])
                digest = DigestStage(spec.name, spec.at, spec.timezone, self.db,
                                     self._digest_sender(spec.deliver_to, target), self.clock.now())
                self.digests[spec.name] = digest
                self.chains[spec.name] = StageChain([self.mute, self.act, digest])

    def _queue(self, spec: ReceiverSpec, notifier: Notifier, *, rate_limited: bool) -> ReceiverQueue:
        p = self.config.notify
        policy = RetryPolicy(spec.max_attempts, p.initial_backoff, p.max_backoff, p.jitter, p.attempt_timeout)
        rate = (RateWindow(spec.rate_limit.count, spec.rate_limit.per)
                if spec.rate_limit is not None and rate_limited else None)
        return ReceiverQueue(spec.name, notifier, self.outbox, policy, _Hooks(self), self._executor,
                             self._rng, rate, self._wake)

    @staticmethod
    def _digest_sender(receiver: str, chain: StageChain) -> Callable[[Notification, float], None]:
        def send(n: Notification, now: float) -> None:
            chain.process(Notification(receiver, n.groups, n.notes, n.kind), now)
        return send

    # -- the AlertSink side -------------------------------------------------

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Take firing and resolved alerts from the evaluator (or a webhook), then flush what is due.

        Returns without waiting for any receiver: sending runs on the executor.
        """
        with self._lock:
            self._put([self._normalise(a, now) for a in alerts], now)
            self._tick(now)

    def _put(self, fresh: list[Alert], now: float) -> None:
        for a in fresh:
            self.alerts[fingerprint(a)] = a
        self.inhibitor.update(fresh)
        self._alert_store.put(fresh, now)
        self.dispatcher.put(fresh, now)

    def _normalise(self, a: Alert, now: float) -> Alert:
        # Like Alertmanager: an alert without an end resolves unless resent within resolve_timeout.
        if a.ends_at is None:
            return Alert(a.labels, a.annotations, a.starts_at, now + self.config.resolve_timeout,
                         a.value, a.generator_url)
        return a

    def tick(self, now: float) -> None:
        """Flush due groups, judge and start sends, deliver digests, forget old state."""
        with self._lock:
            self._tick(now)

    def _tick(self, now: float) -> None:
        self.dispatcher.tick(now)
        for chain in self.chains.values():
            chain.tick(now)
        for q in self.queues.values():
            q.tick(now)
        self._gc(now)

    def next_wakeup(self) -> float | None:
        """The earliest time ``tick`` has something to do."""
        with self._lock:
            times = [self.dispatcher.next_wakeup(), *(d.due for d in self.digests.values()),
                     *(q.next_wakeup() for q in self.queues.values())]
            return min((t for t in times if t is not None), default=None)

    def set_waker(self, fn: Callable[[], None]) -> None:
        """``fn`` is called (from any thread) when a send finishes, so the runner ticks soon."""
        self._waker = fn

    def _wake(self) -> None:
        self._waker()

    def queue_stats(self, now: float) -> list[QueueStats]:
        """Per receiver: notifications owed and the age of the oldest (the self-metrics)."""
        with self._lock:
            return [q.stats(now) for q in self.queues.values()]

    # -- stages' callbacks --------------------------------------------------

    def _flush(self, route: Route, group: AlertGroup, now: float) -> None:
        g = AlertGroup(group.key, group.labels, group.alerts, now, route.options.repeat_interval)
        receiver = route.options.receiver
        own = tuple(a for a in g.alerts if not _about(a, receiver))
        if len(own) < len(g.alerts):  # never tell a failing receiver that it fails
            fallback = self.config.notify.fallback_receiver
            moved = replace(g, alerts=tuple(a for a in g.alerts if _about(a, receiver)))
            if fallback != receiver and fallback in self.chains:
                self.chains[fallback].process(Notification(fallback, (moved,)), now)
            else:
                log.error("%s about receiver %s has nowhere else to go", NOTIFICATIONS_FAILING, receiver)
            g = replace(g, alerts=own)
        if g.alerts:
            self.chains[receiver].process(Notification(receiver, (g,)), now)

    def _record(self, rec: NotificationRecord) -> None:
        self.records.add(rec)
        self._emit(rec)

    def _emit(self, rec: NotificationRecord | ActionRecord) -> None:
        for fn in self._listeners:
            try:
                fn(rec)
            except Exception:  # a listener must not break delivery
                log.exception("record listener failed")

    def subscribe(self, fn: Callable[[NotificationRecord | ActionRecord], None]) -> None:
        """Call ``fn`` with every notification and action record (the demo's terminal view)."""
        self._listeners.append(fn)

    # -- persistence ----------------------------------------------------------

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
            self.nflog.gc(now - NFLOG_RETENTION_S)

    def close(self) -> None:
        """Close the HTTP client and the state file."""
        self._http.close()
        self.db.close()


def _about(a: Alert, receiver: str) -> bool:
    return a.labels.get("alertname") == NOTIFICATIONS_FAILING and a.labels.get("receiver") == receiver


class _Hooks:
    """The pipeline's side of delivery outcomes (called on the ticking thread, under its lock)."""

    def __init__(self, p: Pipeline) -> None:
        self._p = p

    def owed(self, n: Notification) -> bool:
        if n.kind != "alerts":
            return True
        return any(needs_update(self._p.nflog.get(n.receiver, g.key), g, True, g.now) for g in n.groups)

    def delivered(self, n: Notification, now: float) -> None:
        for g in n.groups:  # the log first: it is what a restart trusts
            firing = frozenset(fingerprint(a) for a in g.firing())
            resolved = frozenset(fingerprint(a) for a in g.resolved())
            self._p.nflog.log(n.receiver, g.key, firing, resolved, now)
        self._p._record(NotificationRecord.of(n, now, "sent"))

    def gave_up(self, n: Notification, error: str, now: float) -> None:
        self._p._record(NotificationRecord.of(n, now, "failed", error))

    def attempted(self, receiver: str, error: str | None, now: float) -> None:
        alert = self._p.health.attempted(receiver, error, now)
        if alert is not None:
            self._p._put([self._p._normalise(alert, now)], now)


ALERTING_STATE_FILE = "alerting.sqlite"


def pipeline_from_config(
    config: Config, data_dir: str | Path | None, clock: Clock, **kwargs: Any
) -> Pipeline:
    """The server's pipeline: state in ``data_dir/alerting.sqlite`` (memory when ``None``).

    Attempts run on threads of their own unless ``executor`` says otherwise.
    """
    db = StateDB(Path(data_dir) / ALERTING_STATE_FILE if data_dir is not None else ":memory:")
    kwargs.setdefault("executor", ThreadExecutor())
    return Pipeline(config.alerting, db=db, clock=clock, external_url=config.server.external_url, **kwargs)
