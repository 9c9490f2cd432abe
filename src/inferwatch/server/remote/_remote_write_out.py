"""Remote-write out: every stored sample shipped to Prometheus-compatible receivers (remote-write 1.0).

:class:`TeeStore` sits between the ingest paths (scrape loop, edge ingest)
and the store: a batch goes to the store first and, once the store took it,
into the queue's log (:class:`~inferwatch.server.remote._rw_wal.RemoteWAL`) —
cheap and local, never a network call. One :class:`RemoteSender` thread per
remote reads batches of ``max_samples_per_send`` (or fewer, once the oldest
waited ``batch_send_deadline``), POSTs them as a snappy-compressed protobuf
``WriteRequest``, and moves its cursor only after a 2xx. As Prometheus does:
5xx, 429 and network errors are retried with exponential backoff (from
``min_backoff``, doubling, up to ``max_backoff``; each delay drawn between
half and all of that, so many servers do not retry in step); any other 4xx
drops the batch, counted as failed. Delivery is at-least-once: the batch in
flight at a crash is re-sent after the restart, and receivers treat the same
series, timestamp and value as one sample (Prometheus: an out-of-order
refusal of a batch it already has; VictoriaMetrics: deduplicated with
``-dedup.minScrapeInterval``).
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import httpx
import numpy as np
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from inferwatch.config import RemoteWriteSpec, install_log_redaction, redact_url
from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.model import Clock, Labels, Matcher, MetricKind, Sample
from inferwatch.model import metrics as catalog
from inferwatch.server.ingest import snappy_compress
from inferwatch.server.remote._rw_wal import WAL_FILE, Chunk, RemoteWAL
from inferwatch.store import Series, Store, append_columns

__all__ = ["RemoteSender", "RemoteWrite", "SendCounts", "TeeStore", "backoff_delay", "shown_url"]

log = logging.getLogger(__name__)


def shown_url(url: str) -> str:
    """``url`` without ``user:pass@``, query or fragment (the label of the self-metrics and log lines).

    >>> shown_url("https://u:p@mimir:443/api/v1/push?token=x")
    'https://mimir:443/api/v1/push'
    """
    return redact_url(url)


def backoff_delay(attempt: int, low: float, high: float, rng: random.Random) -> float:
    """The wait before retry ``attempt`` (0-based): between half and all of ``low * 2**attempt``, capped.

    >>> rng = random.Random(1)
    >>> backoff_delay(0, 0.03, 5.0, rng), 0.96 <= backoff_delay(6, 0.03, 5.0, rng) <= 1.92
    (0.03, True)
    """
    base = min(low * 2.0 ** min(attempt, 60), high)
    return max(low, base * (0.5 + 0.5 * rng.random()))


@dataclass
class SendCounts:
    """What one remote's sender did since the process started."""

    sent: int = 0
    failed: int = 0
    dropped: int = 0
    retries: int = 0


class RemoteSender:
    """Ships one remote's backlog from the log; ``start``/``stop`` it, or call :meth:`step` (tests)."""

    def __init__(self, spec: RemoteWriteSpec, wal: RemoteWAL, *, clock: Clock, user_agent: str,
                 transport: httpx.BaseTransport | None = None, rng: random.Random | None = None) -> None:
        self.spec, self.wal, self.clock = spec, wal, clock
        self.name, self.url = spec.queue_name, shown_url(spec.url)
        self.counts = SendCounts()
        self._rng = rng or random.Random()
        self._headers = {**REMOTE_WRITE_HEADERS, "User-Agent": user_agent,
                         **{k: s.reveal() for k, s in spec.headers.items()}}
        if spec.bearer_token is not None:
            self._headers["Authorization"] = f"Bearer {spec.bearer_token.reveal()}"
        install_log_redaction()  # httpx logs each request's URL whole (user:pass@, ?token=)
        self._client = httpx.Client(transport=transport, timeout=spec.timeout)
        self._stop, self._wake = threading.Event(), threading.Event()
        self._opened: float | None = None  # when the batch now filling was first seen
        self._thread: threading.Thread | None = None
        self._down = False  # in an outage (logged once when it starts and once when it ends)
        wal.listen(self._wake)

    def start(self) -> None:
        """Run the sending loop on a daemon thread."""
        self._thread = threading.Thread(target=self._run, name=f"remote-write-{self.name}", daemon=True)
        self._thread.start()

    def request_stop(self) -> None:
        """Ask the loop to end: a batch being retried gives up unacknowledged (it goes first next time)."""
        self._stop.set()
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the loop (a batch still unacknowledged is sent again after a restart) and close."""
        self.request_stop()
        if self._thread is not None:
            self._thread.join(timeout)
        self._client.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                wait = self.step()
            except Exception:  # a background loop logs and goes on
                log.exception("remote-write %s: unexpected error; going on", self.url)
                wait = self.spec.queue.max_backoff
            if wait > 0 and not self._stop.is_set():
                self._wake.clear()
                self.clock.wait(self._wake, wait)

    def step(self) -> float:
        """Send one batch if one is due; return how long to wait before the next step (0: go on)."""
        q = self.spec.queue
        dropped = self.wal.enforce(self.name, q.max_pending_samples, q.max_pending_age)
        if dropped:
            self.counts.dropped += dropped
            log.warning("remote-write %s: %d samples dropped unsent (backlog over its bounds)",
                        self.url, dropped)
        chunk = self.wal.read(self.name, q.max_samples_per_send)
        if chunk is None:
            self._opened = None
            return q.batch_send_deadline
        _, flight = self.wal.cursor(self.name)
        now = self.clock.monotonic()
        if len(chunk) < q.max_samples_per_send and flight != chunk.end:  # a re-sent batch goes at once
            self._opened = now if self._opened is None else self._opened
            if now - self._opened < q.batch_send_deadline:
                return self._opened + q.batch_send_deadline - now
        self._opened = None
        self.send(chunk)
        return 0.0

    def send(self, chunk: Chunk) -> bool:
        """POST ``chunk`` until acknowledged or dropped (or the sender stops); True when acknowledged."""
        self.wal.begin(self.name, chunk.end)
        body = encode_write_request(chunk.samples(), compress=snappy_compress)
        attempt = 0
        while True:
            verdict, why, after = self._post(body)
            self._outage(verdict == "retry", why)
            if verdict == "ok":
                self.counts.sent += len(chunk)
            elif verdict == "drop":
                self.counts.failed += len(chunk)
                log.warning("remote-write %s: %d samples dropped: %s", self.url, len(chunk), why)
            if verdict != "retry":
                self.wal.commit(self.name, chunk.end)
                return verdict == "ok"
            if self._stop.is_set():
                return False  # unacknowledged: the cursor stays, the next run sends it again
            if self._over_bounds(chunk):  # a long outage: the backlog stays bounded meanwhile
                self.counts.dropped += len(chunk)
                log.warning("remote-write %s: %d samples dropped unsent after %d retries (%s): the backlog "
                            "is over its bounds", self.url, len(chunk), attempt, why)
                self.wal.commit(self.name, chunk.end)
                return False
            delay = max(backoff_delay(attempt, self.spec.queue.min_backoff, self.spec.queue.max_backoff,
                                      self._rng), min(after, self.spec.queue.max_backoff))
            self.counts.retries += 1
            attempt += 1
            log.info("remote-write %s: %s; retry %d in %.3fs", self.url, why, attempt, delay)
            self.clock.wait(self._stop, delay)

    def _outage(self, failing: bool, why: str) -> None:
        """Log an outage once when it starts and once when it ends, not once per retry."""
        if failing == self._down:
            return
        self._down = failing
        if failing:
            log.warning("remote-write %s: not accepting samples (%s); they wait in its queue and are "
                        "sent when it answers (said once until then)", self.url, why)
        else:
            log.warning("remote-write %s: accepting samples again; %d still queued", self.url,
                        self.wal.pending(self.name))

    def _over_bounds(self, chunk: Chunk) -> bool:
        q = self.spec.queue
        return (self.clock.now() - chunk.oldest_at > q.max_pending_age
                or self.wal.pending(self.name) > q.max_pending_samples)

    def _post(self, body: bytes) -> tuple[str, str, float]:
        """("ok" | "retry" | "drop", why, Retry-After seconds)."""
        try:
            r = self._client.post(self.spec.url, content=body, headers=self._headers)
        except httpx.HTTPError as exc:
            return "retry", type(exc).__name__, 0.0
        if 200 <= r.status_code < 300:
            return "ok", "", 0.0
        why = f"HTTP {r.status_code}: {r.text[:200].strip()}"
        if r.status_code >= 500 or (r.status_code == 429 and self.spec.queue.retry_on_http_429):
            after = r.headers.get("retry-after", "")
            return "retry", why, float(after) if after.isdigit() else 0.0
        return "drop", why, 0.0


class TeeStore:
    """The store as the ingest paths see it: an append goes to ``store``, then to the remote-write log.

    Reads are the store's. A failure of the log never fails the append (the
    samples are stored; the log says so once and counts them as dropped).
    """

    def __init__(self, store: Store, wal: RemoteWAL) -> None:
        self.store, self.wal = store, wal
        self.unlogged = 0
        self._failing = False

    def append(self, samples: Iterable[Sample]) -> None:
        """Store ``samples``, then log them for the remotes."""
        batch = list(samples)
        self.store.append(batch)
        self._log(lambda: self.wal.append_samples(batch), len(batch))

    def append_columns(self, labels: Sequence[Labels], t: Sequence[float] | np.ndarray,
                       v: Sequence[float] | np.ndarray) -> None:
        """Store the columns (the scrape loop's path), then log them for the remotes."""
        # the helper takes arrays too (the SQLite store's native path; else it zips them)
        append_columns(self.store, labels, cast(Sequence[float], t), cast(Sequence[float], v))
        self._log(lambda: self.wal.append_columns(labels, t, v), len(labels))

    def _log(self, write: Callable[[], None], n: int) -> None:
        try:
            write()
        except Exception:
            self.unlogged += n
            if not self._failing:
                log.exception("remote-write queue: %d stored samples not queued (said once until it works)",
                              n)
            self._failing = True
        else:
            self._failing = False

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """The store's."""
        return self.store.select(matchers, start, end)

    def select_latest(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """The store's (see ``promql``'s load), or its ``select``."""
        latest = getattr(self.store, "select_latest", self.store.select)
        return list(latest(matchers, start, end))

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        """The store's."""
        return self.store.series(matchers)

    def label_values(self, name: str) -> list[str]:
        """The store's."""
        return self.store.label_values(name)

    def delete_before(self, t: float) -> int:
        """The store's."""
        return self.store.delete_before(t)

    def flush(self) -> None:
        """The store's."""
        self.store.flush()

    def close(self) -> None:
        """Closes the store (the log is closed by :class:`RemoteWrite`)."""
        self.store.close()


class RemoteWrite:
    """The log, the tee and one sender per configured remote (``server.remote_write``)."""

    def __init__(self, specs: Sequence[RemoteWriteSpec], store: Store, data_dir: Path, *, clock: Clock,
                 transport: httpx.BaseTransport | None = None) -> None:
        from inferwatch import __version__

        self.wal = RemoteWAL(data_dir / WAL_FILE, [s.queue_name for s in specs], clock=clock)
        self.tee = TeeStore(store, self.wal)
        self.senders = [RemoteSender(s, self.wal, clock=clock, user_agent=f"inferwatch/{__version__}",
                                     transport=transport) for s in specs]

    def start(self) -> None:
        """Start every sender."""
        for s in self.senders:
            s.start()

    def close(self) -> None:
        """Stop the senders and close the log (what is unsent stays for the next start)."""
        for s in self.senders:
            s.stop()
        self.wal.close()

    def metrics(self) -> Iterator[Metric]:
        """The ``inferwatch_remote_write_*`` families, one series per remote."""
        fams = {spec.name: (CounterMetricFamily if spec.kind is MetricKind.COUNTER else GaugeMetricFamily)(
            spec.family, spec.help, labels=spec.labels) for spec in (
            catalog.REMOTE_WRITE_PENDING, catalog.REMOTE_WRITE_SENT_TOTAL, catalog.REMOTE_WRITE_FAILED_TOTAL,
            catalog.REMOTE_WRITE_DROPPED_TOTAL, catalog.REMOTE_WRITE_RETRIES_TOTAL)}
        for s in self.senders:
            key = [s.name, s.url]
            fams[catalog.REMOTE_WRITE_PENDING.name].add_metric(key, float(self.wal.pending(s.name)))
            for spec, n in ((catalog.REMOTE_WRITE_SENT_TOTAL, s.counts.sent),
                            (catalog.REMOTE_WRITE_FAILED_TOTAL, s.counts.failed),
                            (catalog.REMOTE_WRITE_DROPPED_TOTAL, s.counts.dropped + self.tee.unlogged),
                            (catalog.REMOTE_WRITE_RETRIES_TOTAL, s.counts.retries)):
                fams[spec.name].add_metric(key, float(n))
        yield from fams.values()
