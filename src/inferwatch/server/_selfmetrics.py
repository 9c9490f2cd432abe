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
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from inferwatch.model import MetricKind
from inferwatch.model import metrics as catalog
from inferwatch.rules import AlertState
from inferwatch.store import SQLiteStore

if TYPE_CHECKING:
    from inferwatch.alerting import ActionRecord, NotificationRecord, QueueStats
    from inferwatch.alerting.ha import FailOpenStateDB
    from inferwatch.server._integrity import Damage
    from inferwatch.server._storage_health import StorageHealth
    from inferwatch.server.ingest import ScrapeLoop
from inferwatch.server._runtime import Server

__all__ = ["DeliveryCounts", "self_registry"]

_HEALTH = ("up", "down", "unknown")


class DeliveryCounts:
    """Counts the alerting pipeline's records (subscribe it: ``pipeline.subscribe(counts)``).

    ``queues`` reads the receivers' queues at scrape time (``pipeline.queue_stats``).
    """

    def __init__(self, queues: Callable[[], Sequence[QueueStats]] | None = None) -> None:
        self.queues = queues or (lambda: ())
        self._lock = threading.Lock()
        self.notifications: Counter[tuple[str, str]] = Counter()  # (receiver, status)
        self.actions: Counter[tuple[str, str]] = Counter()  # (action, result)

    def __call__(self, rec: NotificationRecord | ActionRecord) -> None:
        from inferwatch.alerting import ActionRecord

        with self._lock:
            if isinstance(rec, ActionRecord):
                result = "deduplicated" if rec.deduplicated else "ok" if rec.ok else "failed"
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
        info = _family(catalog.BUILD_INFO)
        info.add_metric([__version__, platform.python_version()], 1.0)
        yield info
        yield from self._evaluation(server)
        rules = _family(catalog.RULE_GROUP_RULES)
        rules.add_metric([], float(len(comps.rules)))
        yield rules
        states = Counter(str(a.state) for a in comps.evaluator.active())
        alerts = _family(catalog.ALERTS)
        for state in (AlertState.PENDING, AlertState.FIRING):
            alerts.add_metric([str(state)], float(states.get(str(state), 0)))
        yield alerts
        health = Counter(t.health for t in comps.scrape.targets())
        targets = _family(catalog.TARGETS)
        for h in _HEALTH:
            targets.add_metric([h], float(health.get(h, 0)))
        yield targets
        yield from self._discovery(comps.scrape)
        yield from self._limits(comps.store)
        if isinstance(comps.store, SQLiteStore):
            size = _family(catalog.STORAGE_BYTES)
            size.add_metric([], float(_disk_bytes(comps.store)))
            yield size
            yield from self._writes(comps.store, comps.health)
            if comps.store.checkpointer is not None:
                done = _family(catalog.STORAGE_CHECKPOINTS_TOTAL)
                done.add_metric([], float(comps.store.checkpointer.done))
                failed = _family(catalog.STORAGE_CHECKPOINT_FAILURES_TOTAL)
                failed.add_metric([], float(comps.store.checkpointer.failures))
                yield from (done, failed)
        if comps.health is not None:
            yield from self._damage(comps.health.damage)
            if comps.health.state is not None:
                yield from self._held(comps.health.state)
        if self._deliveries is not None:
            yield from self._delivery(self._deliveries)
        if comps.remote is not None:
            yield from comps.remote.metrics()
        for source in server.metric_sources:
            yield from source()

    @staticmethod
    def _discovery(scrape: ScrapeLoop) -> Iterator[Metric]:
        if scrape.discovery is None:
            return
        failing, failures = _family(catalog.SD_FAILING), _family(catalog.SD_REFRESH_FAILURES_TOTAL)
        for st in scrape.discovery.status():
            failing.add_metric([st.job, st.mechanism], 1.0 if st.error else 0.0)
            failures.add_metric([st.job, st.mechanism], float(st.failures))
        found = _family(catalog.SD_DISCOVERED_TARGETS)
        active = Counter(h.job for h in scrape.targets())
        dropped = Counter(d.get("job", "") for d in scrape.dropped())
        for job in scrape.jobs:
            found.add_metric([job, "active"], float(active.get(job, 0)))
            found.add_metric([job, "dropped"], float(dropped.get(job, 0)))
        yield from (failing, failures, found)

    @staticmethod
    def _evaluation(server: Server) -> Iterator[Metric]:
        st = server.stats
        total = _family(catalog.RULE_EVALUATIONS_TOTAL)
        total.add_metric([], float(st.evaluations))
        failed = _family(catalog.RULE_EVALUATION_FAILURES_TOTAL)
        failed.add_metric([], float(st.failures))
        secs = _family(catalog.RULE_EVALUATION_SECONDS_TOTAL)
        secs.add_metric([], st.duration_sum)
        last = _family(catalog.RULE_GROUP_LAST_DURATION)
        last.add_metric([], st.last_duration)
        cpu = _family(catalog.RULE_GROUP_LAST_CPU)
        cpu.add_metric([], st.last_cpu)
        at = _family(catalog.RULE_GROUP_LAST_EVALUATION)
        at.add_metric([], st.last_t or 0.0)
        iterations = _family(catalog.RULE_GROUP_ITERATIONS_TOTAL)
        iterations.add_metric([], float(st.evaluations + st.missed))
        missed = _family(catalog.RULE_GROUP_ITERATIONS_MISSED_TOTAL)
        missed.add_metric([], float(st.missed))
        interval = _family(catalog.RULE_GROUP_INTERVAL)
        interval.add_metric([], server.config.server.evaluation_interval)
        waited = _family(catalog.QUERY_PRIORITY_WAIT_SECONDS_TOTAL)
        waited.add_metric([], server.priority.waited_s)
        yield from (iterations, missed, interval, waited, cpu)
        ok = _family(catalog.CONFIG_LAST_RELOAD_SUCCESSFUL)
        ok.add_metric([], 1.0 if st.last_reload_ok else 0.0)
        when = _family(catalog.CONFIG_LAST_RELOAD_SUCCESS)
        when.add_metric([], st.last_reload_success_t or 0.0)
        yield from (total, failed, secs, last, at, ok, when)

    @staticmethod
    def _limits(store: object) -> Iterator[Metric]:
        counted = getattr(store, "series_count", None)
        if counted is not None:
            series = _family(catalog.STORAGE_SERIES)
            series.add_metric([], float(counted()))
            yield series
        head = getattr(store, "head_memory", None)
        if head is not None:
            samples, size = head()
            held = _family(catalog.STORAGE_HEAD_SAMPLES)
            held.add_metric([], float(samples))
            taken = _family(catalog.STORAGE_HEAD_BYTES)
            taken.add_metric([], float(size))
            yield from (held, taken)
        limits = getattr(store, "limits", None)
        limit = _family(catalog.STORAGE_SERIES_LIMIT)
        limit.add_metric([], float(limits.max_series if limits is not None else 0))
        discarded = _family(catalog.DISCARDED_SAMPLES_TOTAL)
        stats = getattr(store, "stats", None)
        for reason, n in sorted(getattr(stats, "discarded", {}).items()):
            discarded.add_metric([reason], float(n))
        yield from (limit, discarded)

    @staticmethod
    def _writes(store: SQLiteStore, health: StorageHealth | None) -> Iterator[Metric]:
        failing = _family(catalog.STORAGE_WRITE_FAILING)
        failing.add_metric([], 1.0 if store.stats.write_error or (health and health.error()) else 0.0)
        failed = _family(catalog.STORAGE_FAILED_SAMPLES_TOTAL)
        for reason, n in sorted(store.stats.write_failed.items()):
            failed.add_metric([reason], float(n))
        yield from (failing, failed)
        try:
            usage = shutil.disk_usage(store.path.parent)
        except OSError:
            return
        avail, size = _family(catalog.STORAGE_FILESYSTEM_AVAIL), _family(catalog.STORAGE_FILESYSTEM_SIZE)
        avail.add_metric([], float(usage.free))
        size.add_metric([], float(usage.total))
        yield from (avail, size)

    @staticmethod
    def _held(state: FailOpenStateDB) -> Iterator[Metric]:
        held, kept = _family(catalog.ALERTING_STATE_HELD_WRITES), _family(catalog.ALERTING_STATE_HELD_TOTAL)
        held.add_metric([], float(state.pending()))
        kept.add_metric([], float(state.held_total))
        yield from (held, kept)

    @staticmethod
    def _damage(damage: Sequence[Damage]) -> Iterator[Metric]:
        found = _family(catalog.STORE_CORRUPTIONS_TOTAL)
        lost = _family(catalog.STORE_LOST_SERIES)
        for file in sorted({d.file for d in damage}):
            found.add_metric([file], float(sum(d.file == file for d in damage)))
            lost.add_metric([file], float(sum(d.lost_series for d in damage if d.file == file)))
        yield from (found, lost)

    @staticmethod
    def _delivery(deliveries: DeliveryCounts) -> Iterator[Metric]:
        notes, acts = deliveries.snapshot()
        sent = _family(catalog.NOTIFICATIONS_TOTAL)
        for (receiver, status), n in sorted(notes.items()):
            sent.add_metric([receiver, status], float(n))
        ran = _family(catalog.ACTIONS_TOTAL)
        for (action, result), n in sorted(acts.items()):
            ran.add_metric([action, result], float(n))
        length = _family(catalog.NOTIFICATION_QUEUE_LENGTH)
        age = _family(catalog.NOTIFICATION_QUEUE_OLDEST_AGE)
        for q in deliveries.queues():
            length.add_metric([q.receiver], float(q.length))
            age.add_metric([q.receiver], q.oldest_age)
        yield from (sent, ran, length, age)


def _family(spec: catalog.MetricSpec) -> GaugeMetricFamily | CounterMetricFamily:
    """The metric family of a catalog entry (every metric emitted is listed there)."""
    if spec.kind is MetricKind.COUNTER:
        return CounterMetricFamily(spec.family, spec.help, labels=spec.labels)
    return GaugeMetricFamily(spec.family, spec.help, labels=spec.labels)


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
