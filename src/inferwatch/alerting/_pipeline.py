"""The notification pipeline: the ``AlertSink`` the evaluator sends to, driven by ``tick(now)``.

    dispatch (route, group) -> mute (inhibitions, silences) -> actions -> dedup
      -> rate limit -> deliver (notify, retry) -> record
"""

from __future__ import annotations

import json
import random
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from inferwatch.alerting._actions import Action, ActionRecord, ActionStage
from inferwatch.alerting._build import build_action, build_notifier
from inferwatch.alerting._digest import DigestStage
from inferwatch.alerting._dispatch import Dispatcher
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._inhibit import Inhibitor, InhibitRule
from inferwatch.alerting._nflog import NotificationLog
from inferwatch.alerting._notification import AlertGroup, Notification, Notifier, Stage, fingerprint
from inferwatch.alerting._records import NotificationRecord, RecordLog
from inferwatch.alerting._route import Route
from inferwatch.alerting._silence import Silences
from inferwatch.alerting._stages import (
    DedupStage,
    DeliverStage,
    MuteStage,
    RateLimitStage,
    RecordStage,
    StageChain,
)
from inferwatch.alerting._state import StateDB
from inferwatch.config import Config
from inferwatch.config._alerting import AlertingConfig
from inferwatch.config._receivers import DigestReceiverSpec
from inferwatch.model import Clock, Labels, SystemClock
from inferwatch.rules import Alert

__all__ = ["ALERTING_STATE_FILE", "Pipeline", "pipeline_from_config"]

RESOLVED_RETENTION_S = 3600.0  # resolved alerts are forgotten after this
NFLOG_RETENTION_S = 5 * 86400.0  # Alertmanager keeps its notification log 120 h


class Pipeline:
    """Routes, groups, mutes, notifies and acts; state in ``db`` survives restarts.

    >>> from inferwatch.alerting import RecordingNotifier
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
    ) -> None:
        self.config = config
        self.clock = clock or SystemClock()
        self.db = db or StateDB(":memory:")
        self.external_url = external_url
        self._http = http or HttpClient(timeout=config.notify.timeout)
        self._rng = rng or random.Random()
        self._lock = threading.RLock()
        self._listeners: list[Callable[[NotificationRecord | ActionRecord], None]] = []
        self.nflog = NotificationLog(self.db)
        self.silences = Silences(self.db)
        self.records = RecordLog(self.db)
        self.alerts: dict[str, Alert] = self._load_alerts()
        inhibitor = Inhibitor([InhibitRule.build(r) for r in config.inhibit_rules], self.alerts.values)
        self.mute = MuteStage([inhibitor, self.silences])
        built = actions if actions is not None else [build_action(a, self._http)
                                                     for a in config.effective_actions()]
        self.act = ActionStage(built, self.db, self._emit, once_per={
            a.name: (a.once_per, a.cooldown) for a in config.effective_actions()})
        self.notifiers: dict[str, Notifier] = {}
        self.chains: dict[str, StageChain] = {}
        self._delivery: dict[str, StageChain] = {}
        self.digests: dict[str, DigestStage] = {}
        self._build_chains(notifiers or {}, stream, warn)
        self.root = Route.build(config.route)
        self.dispatcher = Dispatcher(self.root, self._flush)
        self.dispatcher.put(self.alerts.values(), self.clock.now())

    def _build_chains(self, overrides: Mapping[str, Notifier], stream: TextIO | None,
                      warn: Callable[[str], None] | None) -> None:
        specs = self.config.effective_receivers()
        for spec in specs:
            if isinstance(spec, DigestReceiverSpec):
                continue
            notifier = overrides.get(spec.name) or build_notifier(spec, self._http, self.external_url,
                                                                  stream, warn)
            self.notifiers[spec.name] = notifier
            delivery: list[Stage] = []
            if spec.rate_limit is not None and spec.name not in overrides:
                delivery.append(RateLimitStage(spec.rate_limit.count, spec.rate_limit.per))
            p = self.config.notify
            delivery.append(DeliverStage(notifier, max_attempts=spec.max_attempts,
                                         initial_backoff=p.initial_backoff, max_backoff=p.max_backoff,
                                         jitter=p.jitter, rng=self._rng, on_give_up=self._gave_up))
            delivery.append(RecordStage(self.nflog, self._sent))
            self._delivery[spec.name] = StageChain(delivery)
            self.chains[spec.name] = StageChain([self.mute, self.act,
                                                 DedupStage(self.nflog, spec.send_resolved), *delivery])
        for spec in specs:
            if isinstance(spec, DigestReceiverSpec):
                target = self._delivery[spec.deliver_to]
                digest = DigestStage(spec.name, spec.at, spec.timezone, self.db,
                                     self._digest_sender(spec.deliver_to, target), self.clock.now())
                self.digests[spec.name] = digest
                self.chains[spec.name] = StageChain([self.mute, self.act, digest])

    @staticmethod
    def _digest_sender(receiver: str, chain: StageChain) -> Callable[[Notification, float], None]:
        def send(n: Notification, now: float) -> None:
            chain.process(Notification(receiver, n.groups, n.notes, n.kind), now)
        return send

    # -- the AlertSink side -------------------------------------------------

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Take firing and resolved alerts from the evaluator (or a webhook), then flush what is due."""
        with self._lock:
            fresh = [self._normalise(a, now) for a in alerts]
            for a in fresh:
                self.alerts[fingerprint(a)] = a
            self._persist(fresh, now)
            self.dispatcher.put(fresh, now)
            self._tick(now)

    def _normalise(self, a: Alert, now: float) -> Alert:
        # Like Alertmanager: an alert without an end resolves unless resent within resolve_timeout.
        if a.ends_at is None:
            return Alert(a.labels, a.annotations, a.starts_at, now + self.config.resolve_timeout,
                         a.value, a.generator_url)
        return a

    def tick(self, now: float) -> None:
        """Flush due groups, release held notifications, retry, deliver digests, forget old state."""
        with self._lock:
            self._tick(now)

    def _tick(self, now: float) -> None:
        self.dispatcher.tick(now)
        for chain in self.chains.values():
            chain.tick(now)
        self._gc(now)

    def next_wakeup(self) -> float | None:
        """The earliest time ``tick`` has something to do."""
        with self._lock:
            times = [self.dispatcher.next_wakeup(), *(d.due for d in self.digests.values())]
            for chain in self.chains.values():
                for st in chain.stages:
                    if isinstance(st, DeliverStage):
                        times.append(st.next_due())
                    elif isinstance(st, RateLimitStage) and st.held():
                        times.append(self.clock.now() + 1.0)
            return min((t for t in times if t is not None), default=None)

    # -- stages' callbacks --------------------------------------------------

    def _flush(self, route: Route, group: AlertGroup, now: float) -> None:
        g = AlertGroup(group.key, group.labels, group.alerts, now, route.options.repeat_interval)
        self.chains[route.options.receiver].process(Notification(route.options.receiver, (g,)), now)

    def _sent(self, n: Notification, now: float) -> None:
        self._record(NotificationRecord.of(n, now, "sent"))

    def _gave_up(self, n: Notification, error: str, now: float) -> None:
        self._record(NotificationRecord.of(n, now, "failed", error))

    def _record(self, rec: NotificationRecord) -> None:
        self.records.add(rec)
        self._emit(rec)

    def _emit(self, rec: NotificationRecord | ActionRecord) -> None:
        for fn in self._listeners:
            try:
                fn(rec)
            except Exception:  # a listener must not break delivery
                import logging

                logging.getLogger("inferwatch.alerting").exception("record listener failed")

    def subscribe(self, fn: Callable[[NotificationRecord | ActionRecord], None]) -> None:
        """Call ``fn`` with every notification and action record (the demo's terminal view)."""
        self._listeners.append(fn)

    # -- persistence ----------------------------------------------------------

    def _load_alerts(self) -> dict[str, Alert]:
        out: dict[str, Alert] = {}
        for fp, body in self.db.query("SELECT fingerprint, body FROM alerts"):
            b = json.loads(str(body))
            out[str(fp)] = Alert(Labels(b["labels"]), b["annotations"], b["starts_at"], b["ends_at"],
                                 float(b["value"]), b["generator_url"])
        return out

    def _persist(self, alerts: Iterable[Alert], now: float) -> None:
        rows = [(fingerprint(a), json.dumps({
            "labels": a.labels.to_dict(), "annotations": dict(a.annotations), "starts_at": a.starts_at,
            "ends_at": a.ends_at, "value": str(a.value), "generator_url": a.generator_url}), now)
            for a in alerts]
        with self.db.transaction() as c:
            c.executemany("INSERT OR REPLACE INTO alerts VALUES (?,?,?)", rows)

    def _gc(self, now: float) -> None:
        old = [fp for fp, a in self.alerts.items()
               if a.ends_at is not None and a.ends_at < now - RESOLVED_RETENTION_S]
        if old:
            with self.db.transaction() as c:
                c.executemany("DELETE FROM alerts WHERE fingerprint=?", [(fp,) for fp in old])
            for fp in old:
                del self.alerts[fp]
            self.nflog.gc(now - NFLOG_RETENTION_S)

    def close(self) -> None:
        """Close the HTTP client and the state file."""
        self._http.close()
        self.db.close()


ALERTING_STATE_FILE = "alerting.sqlite"


def pipeline_from_config(
    config: Config, data_dir: str | Path | None, clock: Clock, **kwargs: Any
) -> Pipeline:
    """The server's pipeline: state in ``data_dir/alerting.sqlite`` (memory when ``None``)."""
    db = StateDB(Path(data_dir) / ALERTING_STATE_FILE if data_dir is not None else ":memory:")
    return Pipeline(config.alerting, db=db, clock=clock, external_url=config.server.external_url, **kwargs)
