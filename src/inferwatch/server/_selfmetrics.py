"""The server's own ``/metrics``: evaluation, targets, alerts, storage and deliveries.

Names follow Prometheus's and Alertmanager's self-metrics with an ``inferwatch_``
prefix (``prometheus_rule_group_last_duration_seconds`` becomes
``inferwatch_rule_group_last_duration_seconds``, ``alertmanager_notifications_total``
becomes ``inferwatch_notifications_total``), so the dashboards and alerts people
already keep for those translate by a rename. Values are read from the current
server generation at scrape time, so a reload never leaves a stale collector.
"""

from __future__ import annotations

import platform
import threading
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from inferwatch.rules import AlertState
from inferwatch.store import SQLiteStore

if TYPE_CHECKING:
    from inferwatch.alerting import ActionRecord, NotificationRecord
    from inferwatch.server._runtime import Server

__all__ = ["DeliveryCounts", "self_registry"]

_HEALTH = ("up", "down", "unknown")


class DeliveryCounts:
    """Counts the alerting pipeline's records (subscribe it: ``pipeline.subscribe(counts)``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.notifications: Counter[tuple[str, str]] = Counter()  # (receiver, status)
        self.actions: Counter[tuple[str, str]] = Counter()  # (action, result)

    def __call__(self, rec: NotificationRecord | ActionRecord) -> None:
        from inferwatch.alerting import ActionRecord

        with self._lock:
            if isinstance(rec, ActionRecord):
                result = ("deduplicated" if rec.outcome.startswith("deduplicated:")
                          else "ok" if rec.ok else "failed")
                self.actions[(rec.action, result)] += 1
            else:
                self.notifications[(rec.receiver, rec.status)] += 1

    def snapshot(self) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
        """Copies of both counters."""
        with self._lock:
            return dict(self.notifications), dict(self.actions)


class _ServerCollector(Collector):
    def __init__(self, server: Server, deliveries: DeliveryCounts | None) -> None:
        self._server = server
        self._deliveries = deliveries

    def collect(self) -> Iterator[Metric]:
        from inferwatch import __version__

        server = self._server
        comps = server.components
        info = GaugeMetricFamily("inferwatch_build_info", "inferwatch version and Python it runs on",
                                 labels=["version", "python"])
        info.add_metric([__version__, platform.python_version()], 1.0)
        yield info
        yield from self._evaluation(server)
        rules = GaugeMetricFamily("inferwatch_rule_group_rules", "Rules loaded")
        rules.add_metric([], float(len(comps.rules)))
        yield rules
        states = Counter(str(a.state) for a in comps.evaluator.active())
        alerts = GaugeMetricFamily("inferwatch_alerts", "Active alerts by state", labels=["state"])
        for state in (AlertState.PENDING, AlertState.FIRING):
            alerts.add_metric([str(state)], float(states.get(str(state), 0)))
        yield alerts
        health = Counter(t.health for t in comps.scrape.targets())
        targets = GaugeMetricFamily("inferwatch_targets", "Scrape targets by health", labels=["health"])
        for h in _HEALTH:
            targets.add_metric([h], float(health.get(h, 0)))
        yield targets
        if isinstance(comps.store, SQLiteStore):
            size = GaugeMetricFamily("inferwatch_storage_bytes",
                                     "Bytes on disk of the SQLite store (with its WAL)")
            size.add_metric([], float(_disk_bytes(comps.store)))
            yield size
        if self._deliveries is not None:
            yield from self._delivery(self._deliveries)

    @staticmethod
    def _evaluation(server: Server) -> Iterator[Metric]:
        st = server.stats
        total = CounterMetricFamily("inferwatch_rule_evaluations", "Rule evaluation rounds")
        total.add_metric([], float(st.evaluations))
        failed = CounterMetricFamily("inferwatch_rule_evaluation_failures",
                                     "Rule evaluation rounds that raised")
        failed.add_metric([], float(st.failures))
        secs = CounterMetricFamily("inferwatch_rule_evaluation_duration_seconds",
                                   "Seconds spent evaluating rules, over all rounds")
        secs.add_metric([], st.duration_sum)
        last = GaugeMetricFamily("inferwatch_rule_group_last_duration_seconds",
                                 "Duration of the last evaluation round")
        last.add_metric([], st.last_duration)
        at = GaugeMetricFamily("inferwatch_rule_group_last_evaluation_timestamp_seconds",
                               "Time of the last evaluation round (0 before the first)")
        at.add_metric([], st.last_t or 0.0)
        yield from (total, failed, secs, last, at)

    @staticmethod
    def _delivery(deliveries: DeliveryCounts) -> Iterator[Metric]:
        notes, acts = deliveries.snapshot()
        sent = CounterMetricFamily("inferwatch_notifications",
                                   "Notifications by receiver and status (sent, failed)",
                                   labels=["receiver", "status"])
        for (receiver, status), n in sorted(notes.items()):
            sent.add_metric([receiver, status], float(n))
        ran = CounterMetricFamily("inferwatch_actions",
                                  "Action runs by action and result (ok, failed, deduplicated)",
                                  labels=["action", "result"])
        for (action, result), n in sorted(acts.items()):
            ran.add_metric([action, result], float(n))
        yield from (sent, ran)


def _disk_bytes(store: SQLiteStore) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        try:
            total += store.path.with_name(store.path.name + suffix).stat().st_size
        except OSError:
            continue
    return total


def self_registry(server: Server, deliveries: DeliveryCounts | None = None) -> CollectorRegistry:
    """A registry with the process, platform and GC collectors and the server's own metrics."""
    reg = CollectorRegistry(auto_describe=False)
    ProcessCollector(registry=reg)
    PlatformCollector(registry=reg)
    GCCollector(registry=reg)
    reg.register(_ServerCollector(server, deliveries))
    return reg
