"""Aggregation groups, as Alertmanager's dispatcher keeps them.

Each alert is routed; for every matching route it joins the group named by
the route and the alert's group labels. A new group is flushed ``group_wait``
after its first alert (at once if that alert started longer ago than
``group_wait``), then every ``group_interval``; the dedup stage decides
whether a flush sends anything. Resolved alerts leave the group after the
flush that carried them; an empty group is dropped. A flush inside one of its route's
mute time intervals (or outside its active ones) sends nothing and goes on as any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from inferwatch.alerting._notification import AlertGroup, fingerprint
from inferwatch.alerting._route import Route
from inferwatch.alerting.mute import TimeIntervals
from inferwatch.model import Labels
from inferwatch.rules import Alert

__all__ = ["AggregationGroup", "Dispatcher"]

FlushFn = Callable[[Route, AlertGroup, float], None]
_NAMED_KEPT = 1 << 16


@dataclass(slots=True)
class AggregationGroup:
    """The alerts of one route and group-label set, and when to flush them next."""

    route: Route
    key: str
    labels: Labels
    next_flush: float
    alerts: dict[str, Alert] = field(default_factory=dict)
    has_flushed: bool = False
    _sorted: tuple[Alert, ...] | None = field(default=None, repr=False, compare=False)

    def snapshot(self, now: float) -> AlertGroup:
        """The group's alerts as a value, sorted by labels (the order kept until the alerts change)."""
        if self._sorted is None:  # escalation asks every tick: a storm's groups are not re-sorted each time
            self._sorted = tuple(sorted(self.alerts.values(), key=_label_pairs))
        return AlertGroup(self.key, self.labels, self._sorted, now)

    def put(self, fp: str, alert: Alert) -> None:
        """Add or replace an alert."""
        self.alerts[fp] = alert
        self._sorted = None

    def drop(self, fp: str) -> None:
        """Remove an alert."""
        del self.alerts[fp]
        self._sorted = None


def _label_pairs(a: Alert) -> tuple[tuple[str, str], ...]:
    return a.labels.items_tuple  # the order of ``Labels.__lt__``, compared in C


class Dispatcher:
    """Routes alerts into groups and flushes groups on time; no threads, driven by ``tick``."""

    def __init__(self, root: Route, flush: FlushFn, times: TimeIntervals | None = None) -> None:
        self.root = root
        self._flush = flush
        self._times = times or TimeIntervals(())
        self.groups: dict[str, AggregationGroup] = {}
        self._named: dict[tuple[str, tuple[str | None, ...]], tuple[str, Labels]] = {}  # group key, labels

    def put(self, alerts: Iterable[Alert], now: float) -> None:
        """Add or update alerts in their groups (an alert with the same labels replaces)."""
        for alert in alerts:
            for route in self.root.match(alert.labels):
                self._insert(route, alert, now)

    def _insert(self, route: Route, alert: Alert, now: float) -> None:
        opts = route.options
        key, labels = self._name(route, alert.labels)
        group = self.groups.get(key)
        if group is None:
            group = AggregationGroup(route, key, labels, now + opts.group_wait)
            self.groups[key] = group
        group.put(fingerprint(alert), alert)
        # An alert older than group_wait needs no waiting for more of its kind.
        if not group.has_flushed and alert.starts_at + opts.group_wait <= now:
            group.next_flush = min(group.next_flush, now)

    def _name(self, route: Route, alerts_labels: Labels) -> tuple[str, Labels]:
        """The group's key and labels, remembered by the group labels' values (a storm's few groups)."""
        opts = route.options
        if opts.group_by_all:
            return f"{route.key}:{alerts_labels}", alerts_labels
        values = (route.key, tuple(map(alerts_labels.get, opts.group_by)))
        named = self._named.get(values)
        if named is None:
            labels = opts.group_labels(alerts_labels)
            named = (f"{route.key}:{labels}", labels)
            if len(self._named) >= _NAMED_KEPT:
                self._named.clear()
            self._named[values] = named
        return named

    def tick(self, now: float) -> int:
        """Flush every group that is due; return how many were flushed."""
        due = [g for g in self.groups.values() if g.next_flush <= now]
        for group in sorted(due, key=lambda g: (g.next_flush, g.key)):
            self._flush_group(group, now)
        return len(due)

    def _flush_group(self, group: AggregationGroup, now: float) -> None:
        group.next_flush = now + group.route.options.group_interval
        group.has_flushed = True
        snap = group.snapshot(now)
        opts = group.route.options
        if not self._times.muted(opts.mute_time_intervals, opts.active_time_intervals, now):
            self._flush(group.route, snap, now)
        for alert in snap.resolved():
            if group.alerts.get(fingerprint(alert)) == alert:
                group.drop(fingerprint(alert))
        if not group.alerts:
            del self.groups[group.key]

    def next_wakeup(self) -> float | None:
        """When the earliest group is due, or ``None`` with no groups."""
        return min((g.next_flush for g in self.groups.values()), default=None)
