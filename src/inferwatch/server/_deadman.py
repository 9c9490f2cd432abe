"""The dead man's switch in ``serve``, and the series the default pack's self-alerts read.

``DeadMansSwitch`` holds the Watchdog sender (``alerting.heartbeat``) and the heartbeat
watch (``heartbeats``), both on threads of their own, off the evaluation path.
``SelfSeries`` records, every evaluation round, the server's own numbers that the
default pack's self-alerts judge (rounds skipped, notifications owed, heartbeats failing
to send) into its own store, so they work without the server scraping its own
``/metrics`` (when it does, the rules' ``max without (job, instance)`` makes one alert).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import httpx
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from inferwatch._exceptions import InferwatchError
from inferwatch.alerting import Pipeline
from inferwatch.alerting.deadman import HeartbeatSender, HeartbeatWatch, resolve_target
from inferwatch.config import Config
from inferwatch.model import Clock, Labels, MetricKind
from inferwatch.model import metrics as catalog
from inferwatch.store import append_columns, hold_samples

if TYPE_CHECKING:
    from inferwatch.server._runtime import Server

__all__ = ["DeadMansSwitch", "SelfSeries"]

_MISSED = catalog.RULE_GROUP_ITERATIONS_MISSED_TOTAL.name
_QUEUE_LENGTH = catalog.NOTIFICATION_QUEUE_LENGTH.name
_QUEUE_AGE = catalog.NOTIFICATION_QUEUE_OLDEST_AGE.name


@dataclass
class DeadMansSwitch:
    """The Watchdog sender (``None`` without ``alerting.heartbeat``) and the heartbeat watch."""

    sender: HeartbeatSender | None
    watch: HeartbeatWatch

    @classmethod
    def build(cls, config: Config, clock: Clock, pipeline: Pipeline, *, source: str | None = None,
              transport: httpx.BaseTransport | None = None) -> DeadMansSwitch:
        """Both parts from ``config`` (the sender's secrets are read now: ``ConfigError`` names
        what is missing)."""
        spec = config.alerting.heartbeat
        sender = None
        if spec is not None:
            sender = HeartbeatSender(resolve_target(spec), clock=clock, interval=spec.interval,
                                     timeout=spec.timeout, source=source,
                                     external_url=config.server.external_url, transport=transport)
        shared = pipeline.db if config.ha is not None else None  # a pair: a beat to either counts on both
        return cls(sender, HeartbeatWatch(config.heartbeats, clock, pipeline.send, shared=shared))

    def start(self) -> None:
        """Start sending and watching (a watch with no heartbeats runs no thread)."""
        if self.sender is not None:
            self.sender.start()
        if self.watch.states:
            self.watch.start()

    def stop(self) -> None:
        """Stop both (the send in flight finishes)."""
        if self.sender is not None:
            self.sender.stop()
        self.watch.stop()

    def samples(self) -> list[tuple[catalog.MetricSpec, tuple[str, ...], float]]:
        """Every series of both parts now: (catalog entry, label values, value)."""
        out: list[tuple[catalog.MetricSpec, tuple[str, ...], float]] = []
        s = self.sender
        if s is not None:
            kind = (s.target.kind,)
            out += [(catalog.HEARTBEAT_SENDS_TOTAL, kind, float(s.sent)),
                    (catalog.HEARTBEAT_SEND_FAILURES_TOTAL, kind, float(s.failures)),
                    (catalog.HEARTBEAT_CONSECUTIVE_FAILURES, kind, float(s.failing_in_a_row))]
        for name, st in self.watch.states.items():
            out += [(catalog.HEARTBEATS_RECEIVED_TOTAL, (name,), float(st.received)),
                    (catalog.HEARTBEAT_LAST_RECEIVED, (name,), st.last or 0.0)]
        return out

    def metrics(self) -> Iterator[Metric]:
        """The families for ``/metrics``."""
        families: dict[str, GaugeMetricFamily | CounterMetricFamily] = {}
        for spec, values, value in self.samples():
            fam = families.get(spec.name)
            if fam is None:
                kind = CounterMetricFamily if spec.kind is MetricKind.COUNTER else GaugeMetricFamily
                fam = families[spec.name] = kind(spec.family, spec.help, labels=spec.labels)
            fam.add_metric(list(values), value)
        yield from families.values()


class SelfSeries:
    """Records the self-alerts' series into the server's own store every round (``Server.round_hooks``)."""

    def __init__(self, server: Server, pipeline: Pipeline, deadman: DeadMansSwitch | None = None, *,
                 rounds: bool = True) -> None:
        """``rounds``: record the rounds skipped (not at a compressed ``--speed``, where a loaded
        machine skips rounds that are real seconds, not minutes)."""
        self.server, self.pipeline, self.deadman, self.rounds = server, pipeline, deadman, rounds
        self.extra: Callable[[], list[tuple[Labels, float]]] = list
        """More rows every round (an HA replica's: ``PeerReplicaMissing``, ``HADatabaseFailing``)."""

    def rows(self, now: float) -> list[tuple[Labels, float]]:
        """This round's series and values."""
        rows: list[tuple[Labels, float]] = []
        if self.rounds:
            rows.append((Labels.of(_MISSED), float(self.server.stats.missed)))
        for q in self.pipeline.queue_stats(now):
            rows += [(Labels.of(_QUEUE_LENGTH, receiver=q.receiver), float(q.length)),
                     (Labels.of(_QUEUE_AGE, receiver=q.receiver), q.oldest_age)]
        if self.deadman is not None:
            for spec, values, value in self.deadman.samples():
                if spec.kind is MetricKind.COUNTER or spec is catalog.HEARTBEAT_CONSECUTIVE_FAILURES:
                    rows.append((Labels.of(spec.name, **dict(zip(spec.labels, values, strict=True))), value))
        return rows + self.extra()

    def record(self, now: float) -> None:
        """Append this round's rows to the store (held in memory when it refuses them)."""
        rows = self.rows(now)
        labels, values = [r[0] for r in rows], [r[1] for r in rows]
        # per round (a reload swaps the generation); the appender: the remote-write tee sends them too
        store = self.server.components.appender
        try:
            append_columns(store, labels, [now] * len(rows), values)
        except InferwatchError:
            hold_samples(store, labels, [now] * len(rows), values)
