"""Builds the notify stages from config in one place, as Alertmanager's ``PipelineBuilder.New`` does.

    per receiver:  mute -> actions -> dedup -> enqueue   (outbox -> that receiver's queue)
    per digest:    mute -> actions -> digest             (delivered through its target's queue)
    actions:       ledger claim -> the executor (a thread per run in the server), with the action's timeout

Everything varying is injected (HTTP client, random generator, executor, output
stream); the stores come in opened (``Stores.open``), so the builder writes no SQL.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

from inferwatch.alerting._alertstore import AlertStore
from inferwatch.alerting._delivery import DeliveryHooks, Executor, RateWindow, ReceiverQueue, RetryPolicy
from inferwatch.alerting._digest import DigestStage
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._nflog import NotificationLog
from inferwatch.alerting._notification import Notification, Notifier
from inferwatch.alerting._outbox import Outbox
from inferwatch.alerting._records import RecordLog
from inferwatch.alerting._stages import DedupStage, EnqueueStage, StageChain
from inferwatch.alerting._state import StateStore
from inferwatch.alerting.actions import Action, ActionLedger, ActionRecord, ActionStage, build_action
from inferwatch.alerting.mute import Inhibitor, InhibitRule, MuteStage, Silences
from inferwatch.alerting.notify import build_notifier, robot_key
from inferwatch.alerting.oncall import Acks, CallWatch
from inferwatch.model import Clock
from inferwatch.rules import Alert
from inferwatch.settings import BaseAlertingConfig, DigestReceiverSpec, ReceiverBase

__all__ = ["PipelineBuilder", "Stages", "Stores"]


@dataclass(frozen=True, slots=True)
class Stores:
    """The pipeline's typed stores over one state file."""

    db: StateStore
    nflog: NotificationLog
    silences: Silences
    records: RecordLog
    outbox: Outbox
    alerts: AlertStore
    ledger: ActionLedger
    acks: Acks

    @classmethod
    def open(cls, db: StateStore) -> Stores:
        """Load every store from ``db``."""
        return cls(db, NotificationLog(db), Silences(db), RecordLog(db), Outbox(db), AlertStore(db),
                   ActionLedger(db), Acks(db))


@dataclass(frozen=True, slots=True)
class Stages:
    """What the builder made: the muters and stages, the notifier and queue of every receiver."""

    inhibitor: Inhibitor
    mute: MuteStage
    act: ActionStage
    notifiers: dict[str, Notifier]
    queues: dict[str, ReceiverQueue]
    chains: dict[str, StageChain]
    digests: dict[str, DigestStage]


class PipelineBuilder:
    """The stages of ``config``; ``notifiers`` and ``actions`` stand in for built ones (tests, replay)."""

    def __init__(self, config: BaseAlertingConfig, *, http: HttpClient, rng: random.Random,
                 executor: Executor,
                 external_url: str = "", stream: TextIO | None = None,
                 warn: Callable[[str], None] | None = None,
                 notifiers: Mapping[str, Notifier] | None = None, actions: Sequence[Action] | None = None,
                 calls: CallWatch | None = None, clock: Clock | None = None) -> None:
        self.config = config
        self._calls, self._clock = calls, clock
        self._http, self._rng, self._executor = http, rng, executor
        self._url, self._stream, self._warn = external_url, stream, warn
        self._overrides = dict(notifiers or {})
        self._actions = actions

    def build(self, stores: Stores, alerts: Iterable[Alert], outcomes: DeliveryHooks,
              on_action: Callable[[ActionRecord], None], wake: Callable[[], None], now: float) -> Stages:
        """Build every stage (nothing runs yet)."""
        cfg = self.config
        inhibitor = Inhibitor([InhibitRule.build(r) for r in cfg.inhibit_rules], alerts)
        mute = MuteStage([inhibitor, stores.silences])
        built = self._actions if self._actions is not None else [
            build_action(a, self._http) for a in cfg.effective_actions()]
        specs = cfg.effective_actions()
        act = ActionStage(built, stores.ledger, on_action, {a.name: (a.once_per, a.cooldown) for a in specs},
                          executor=self._executor, timeouts={a.name: a.timeout for a in specs}, wake=wake)
        stages = Stages(inhibitor, mute, act, {}, {}, {}, {})
        enqueue: dict[str, EnqueueStage] = {}
        windows: dict[str, RateWindow] = {}  # by robot: receivers posting to one robot share its limit
        for spec in cfg.effective_receivers():
            if isinstance(spec, DigestReceiverSpec):
                continue
            notifier = self._overrides.get(spec.name) or build_notifier(
                spec, self._http, self._url, self._stream, self._warn, language=cfg.language,
                timezone=cfg.timezone, schedules=cfg.oncall, calls=self._calls,
                clock=self._clock)
            queue = self._queue(spec, notifier, stores.outbox, outcomes, wake, windows)
            stages.notifiers[spec.name], stages.queues[spec.name] = notifier, queue
            enqueue[spec.name] = EnqueueStage(stores.outbox, queue)
            dedup = DedupStage(stores.nflog, spec.send_resolved, stores.acks)
            stages.chains[spec.name] = StageChain([mute, act.gate(spec.name), dedup, enqueue[spec.name]])
        for spec in cfg.effective_receivers():
            if isinstance(spec, DigestReceiverSpec):
                send = _digest_sender(spec.deliver_to, StageChain([enqueue[spec.deliver_to]]))
                digest = DigestStage(spec.name, spec.at, spec.timezone or cfg.timezone, stores.db, send, now,
                                     language=spec.language or cfg.language)
                stages.digests[spec.name] = digest
                stages.chains[spec.name] = StageChain([mute, act.gate(spec.name), digest])
        return stages

    def _queue(self, spec: ReceiverBase, notifier: Notifier, outbox: Outbox, outcomes: DeliveryHooks,
               wake: Callable[[], None], windows: dict[str, RateWindow]) -> ReceiverQueue:
        p = self.config.notify
        policy = RetryPolicy(spec.max_attempts, p.initial_backoff, p.max_backoff, p.jitter, p.attempt_timeout)
        # A stand-in notifier (tests, replay) is not the service: its rate limit does not apply.
        limited = spec.rate_limit is not None and spec.name not in self._overrides
        rate = None
        if spec.rate_limit and limited:
            rate = windows.setdefault(robot_key(spec), RateWindow(spec.rate_limit.count, spec.rate_limit.per))
        return ReceiverQueue(spec.name, notifier, outbox, policy, outcomes, self._executor, self._rng,
                             rate, wake)


def _digest_sender(receiver: str, chain: StageChain) -> Callable[[Notification, float], None]:
    def send(n: Notification, now: float) -> None:
        chain.process(Notification(receiver, n.groups, n.notes, n.kind), now)
    return send
