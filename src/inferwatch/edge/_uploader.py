"""Sending the spool: batches in order, exponential backoff with jitter, acknowledged only on success.

*When* to send is here; *how* is a :class:`Target` (the inferwatch ingest
endpoint or Prometheus remote-write). A target answers ``ok``, ``retry``
(network error, 5xx, 429, a refused token: nothing is dropped), ``too_large``
(413: the batch is split in halves and sent again, down to one sample; the
batch size grows back, doubling, after each success) or ``reject`` (the
receiver says the batch itself is bad, 4xx: retrying cannot help, so the
batch is dropped and counted as ``rejected``).
"""

from __future__ import annotations

import enum
import logging
import random
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from inferwatch._exceptions import StoreError
from inferwatch.edge._spool import Spool, SpoolBatch
from inferwatch.model import Clock

__all__ = ["Backoff", "Outcome", "Target", "Uploader"]

log = logging.getLogger(__name__)


class Outcome(enum.Enum):
    """What a target made of one batch."""

    OK = "ok"
    RETRY = "retry"
    REJECT = "reject"
    TOO_LARGE = "too_large"


class Target(Protocol):
    """Where batches go."""

    name: str

    def send(self, batch: SpoolBatch, spool: Spool) -> tuple[Outcome, str]:
        """Deliver ``batch``; the outcome and a short reason (no secrets in it)."""
        ...


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with full jitter: attempt ``n`` waits ``uniform(base, min(cap, base*2**n))``."""

    base: float = 1.0
    cap: float = 300.0

    def delay(self, attempt: int, rng: random.Random) -> float:
        """Seconds to wait before retry number ``attempt`` (0 = the first retry)."""
        top = min(self.cap, self.base * 2.0 ** min(attempt, 30))
        return rng.uniform(self.base, max(top, self.base))


class Uploader:
    """Moves batches from the spool to a target on its own thread; :meth:`step` does one try."""

    def __init__(self, spool: Spool, target: Target, *, clock: Clock, batch_size: int = 1000,
                 flush_interval: float = 5.0, backoff: Backoff | None = None,
                 rng: random.Random | None = None, on_event: Callable[[str], None] | None = None) -> None:
        self.spool, self.target, self.clock = spool, target, clock
        self.batch_size, self.flush_interval = batch_size, flush_interval
        self.backoff = backoff or Backoff()
        self.rng = rng or random.Random()
        self.on_event = on_event or (lambda line: None)
        self.sent_batches = self.sent_samples = self.rejected = self.failures = 0
        self._attempt = 0
        self._unrecorded: SpoolBatch | None = None  # delivered, not yet recorded (a full disk)
        self._unrecorded_event = ""
        self._record_tries = 0
        self._limit = batch_size  # smaller after a 413 (the batch split), doubling back after successes
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def step(self) -> float:
        """Try one batch; return how long to wait before the next try (0 when more is waiting)."""
        if self._unrecorded is not None:  # delivered, but the full disk would not let us record it
            return self._record(self._unrecorded, self._unrecorded_event)
        batch = self.spool.next_batch(min(self.batch_size, self._limit))
        if batch is None:
            return self.flush_interval
        try:
            outcome, reason = self.target.send(batch, self.spool)
        except Exception as exc:  # a target bug must not stop delivery: retried like a network error
            log.exception("%s: sending a batch failed", self.target.name)
            outcome, reason = Outcome.RETRY, type(exc).__name__
        if outcome is Outcome.RETRY:
            self.failures += 1
            wait = self.backoff.delay(self._attempt, self.rng)
            self._attempt += 1
            self.on_event(f"retry {batch.batch_id} in {wait:.1f}s: {reason}")
            return wait
        self._attempt = 0
        if outcome is Outcome.TOO_LARGE and len(batch.samples) > 1:  # split, never drop, a batch too big
            self._limit = max(1, len(batch.samples) // 2)
            self.spool.release(batch)
            self.on_event(f"split {batch.batch_id} to {self._limit} samples: {reason}")
            return 0.0
        if outcome is not Outcome.OK:  # a bad batch, or one sample too big to send at all
            self.rejected += len(batch.samples)
            log.warning("%s rejected batch %s (%d samples dropped): %s", self.target.name,
                        batch.batch_id, len(batch.samples), reason)
        else:
            self.sent_batches += 1
            self.sent_samples += len(batch.samples)
            self._limit = min(self.batch_size, self._limit * 2)
        return self._record(batch, f"{outcome.value} {batch.batch_id} {len(batch.samples)}")

    def _record(self, batch: SpoolBatch, event: str) -> float:
        """Record ``batch`` as done in the spool; a disk that refuses it is retried with backoff, never
        by sending the batch again, with one log line when it starts and one when it ends."""
        try:
            self.spool.ack(batch)
        except StoreError as exc:
            if self._unrecorded is None:
                log.warning("%s: batch %s was delivered but cannot be recorded (%s); retrying with backoff "
                            "until the disk has room", self.target.name, batch.batch_id, exc)
            self._unrecorded, self._unrecorded_event = batch, event
            wait = self.backoff.delay(self._record_tries, self.rng)
            self._record_tries += 1
            return wait
        if self._unrecorded is not None:
            log.warning("%s: batch %s recorded as delivered: the disk has room again", self.target.name,
                        batch.batch_id)
            self._unrecorded, self._record_tries = None, 0
        self.on_event(event)
        return 0.0

    def drain(self, max_steps: int = 1_000_000) -> int:
        """Send until the spool is empty or a try fails (tests, shutdown); returns batches tried."""
        for n in range(max_steps):
            if self.spool.backlog() == 0 or self.step() > 0:
                return n + 1
        return max_steps

    def start(self) -> None:
        """Run :meth:`step` on a daemon thread until :meth:`stop`."""
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="inferwatch-edge-upload", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                wait = self.step()
            except Exception:
                log.exception("edge upload step failed")
                wait = self.flush_interval
            if wait > 0 and self.clock.wait(self._stop, wait):
                return

    def stop(self, timeout: float | None = None) -> bool:
        """Stop the thread: a batch in flight gets ``timeout`` seconds (default: the target's request
        timeout and 2 s) to be answered and acknowledged. Return whether it is still in flight (it is
        then resent at the next start, under the same id, and the server drops the repeat)."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is None:
            return False
        thread.join(timeout if timeout is not None else float(getattr(self.target, "timeout", 10.0)) + 2.0)
        return thread.is_alive()
