"""Alerts pushed to existing Alertmanagers' ``/api/v2/alerts``, the way Prometheus's notifier does.

The evaluator already decides *when* (firing alerts every ``resend_delay``,
a resolved one once more); this sink decides *how*: each alert gets the
external labels (an alert's own label wins), a firing alert an ``endsAt`` of
``now + 4 * max(evaluation interval, resend delay)`` (two missed evaluations
or sends do not resolve it), a resolved one its end. Posting happens on a
background thread from a bounded queue (oldest dropped when full), in batches
of 64 to every Alertmanager, so a slow Alertmanager never delays evaluation.
"""

from __future__ import annotations

import collections
import logging
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from inferwatch.alerting import rfc3339
from inferwatch.config import AlertmanagerSpec, Config, redact_url
from inferwatch.rules import Alert, AlertSink

__all__ = ["AlertmanagerPush", "FanoutSink", "PushCounts", "alert_sink", "alerts_payload"]

log = logging.getLogger(__name__)

QUEUE_CAPACITY = 10_000  # Prometheus's --alertmanager.notification-queue-capacity
MAX_BATCH = 64  # Prometheus's maxBatchSize
RESEND_FACTOR = 4


def alerts_payload(alerts: Sequence[Alert], now: float, external_labels: Mapping[str, str],
                   valid_for: float) -> list[dict[str, Any]]:
    """The JSON body of ``POST /api/v2/alerts`` for ``alerts`` sent at ``now``."""
    out = []
    for a in alerts:
        labels = {**external_labels, **dict(a.labels.items())}
        ends = a.ends_at if a.ends_at is not None and a.resolved(now) else now + valid_for
        body: dict[str, Any] = {"labels": labels, "annotations": dict(a.annotations),
                                "startsAt": rfc3339(a.starts_at), "endsAt": rfc3339(ends)}
        if a.generator_url:
            body["generatorURL"] = a.generator_url
        out.append(body)
    return out


@dataclass
class PushCounts:
    """What the pusher did, per the whole process (read by tests and the log)."""

    sent: int = 0
    failed: int = 0
    dropped: int = 0


class AlertmanagerPush:
    """An ``AlertSink`` posting to Alertmanagers from a background thread; ``start``/``stop`` it.

    ``transport`` is injectable (tests); ``flush(timeout)`` waits until the queue is empty.
    """

    def __init__(self, targets: Sequence[AlertmanagerSpec], *, external_labels: Mapping[str, str],
                 valid_for: float, transport: httpx.BaseTransport | None = None,
                 capacity: int = QUEUE_CAPACITY) -> None:
        self.targets = tuple(targets)
        self.external_labels = dict(external_labels)
        self.valid_for = valid_for
        self.counts = PushCounts()
        self._queue: collections.deque[dict[str, Any]] = collections.deque(maxlen=capacity)
        self._cond = threading.Condition()
        self._busy = False
        self._stopping = False
        self._client = httpx.Client(transport=transport)
        self._thread = threading.Thread(target=self._run, name="alertmanager-push", daemon=True)

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Queue ``alerts`` (never blocks; the oldest are dropped when the queue is full)."""
        payload = alerts_payload(alerts, now, self.external_labels, self.valid_for)
        with self._cond:
            overflow = max(0, len(self._queue) + len(payload) - (self._queue.maxlen or 0))
            self.counts.dropped += overflow
            self._queue.extend(payload)
            self._cond.notify_all()

    def start(self) -> None:
        """Start the sending thread."""
        self._thread.start()

    def stop(self) -> None:
        """Send what is queued, then stop the thread and close the client."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join(timeout=max(t.timeout for t in self.targets) + 1 if self.targets else 1)
        self._client.close()

    def flush(self, timeout: float) -> bool:
        """Wait until every queued alert has been posted (or failed); return whether it was."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._queue and not self._busy, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._queue) or self._stopping)
                if not self._queue and self._stopping:
                    return
                batch = [self._queue.popleft() for _ in range(min(MAX_BATCH, len(self._queue)))]
                self._busy = True
            try:
                for target in self.targets:
                    self._post(target, batch)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def _post(self, target: AlertmanagerSpec, batch: list[dict[str, Any]]) -> None:
        headers = {"Authorization": f"Bearer {target.bearer_token.reveal()}"} if target.bearer_token else {}
        url = f"{target.url}/api/v2/alerts"
        try:
            r = self._client.post(url, json=batch, headers=headers, timeout=target.timeout)
            r.raise_for_status()
        except httpx.HTTPError as exc:
            # Not retried, as in Prometheus: the next resend (a minute) carries the alerts again.
            self.counts.failed += len(batch)
            why = str(exc).replace(url, redact_url(url)) or type(exc).__name__  # httpx quotes the URL
            log.warning("alertmanager %s: %d alerts not sent: %s", redact_url(url), len(batch), why)
            return
        self.counts.sent += len(batch)


class FanoutSink:
    """Sends each round's alerts to several sinks; one failing does not stop the others."""

    def __init__(self, *sinks: AlertSink) -> None:
        self.sinks = sinks

    def send(self, alerts: Sequence[Alert], now: float) -> None:
        """Hand ``alerts`` to every sink."""
        for sink in self.sinks:
            try:
                sink.send(alerts, now)
            except Exception:
                log.exception("alert sink %s failed", type(sink).__name__)


def alert_sink(config: Config, pipeline: AlertSink, *, resend_delay: float = 60.0,
               transport: httpx.BaseTransport | None = None) -> tuple[AlertSink, AlertmanagerPush | None]:
    """The evaluator's sink: the pipeline, plus a (not yet started) pusher when Alertmanagers are set."""
    if not config.alerting.alertmanagers:
        return pipeline, None
    push = AlertmanagerPush(
        config.alerting.alertmanagers, external_labels=config.alerting.external_labels,
        valid_for=RESEND_FACTOR * max(config.server.evaluation_interval, resend_delay), transport=transport)
    return FanoutSink(pipeline, push), push
