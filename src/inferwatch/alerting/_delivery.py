"""Delivery: sends what the outbox owes, per receiver, off the pipeline's tick.

``tick(now)`` is deterministic and quick: it collects finished attempts,
abandons attempts past their timeout (retried with backoff, the late answer
ignored), and starts attempts that are due. An ``Executor`` runs an attempt:
``InlineExecutor`` at once on the caller's thread (replay, simulated-time
tests), ``ThreadExecutor`` on a thread of its own (the server), so a receiver
that hangs delays only its own notifications. Delivery is at least once: a
send in flight at a crash or past its timeout may arrive twice, with the same
idempotency key (``Notification.id``).
"""

from __future__ import annotations

import hashlib
import logging
import random
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Protocol

from inferwatch._exceptions import NotifyError
from inferwatch.alerting._executor import CommittedExecutor, Executor, InlineExecutor, Job, ThreadExecutor
from inferwatch.alerting._notification import Notification, Notifier
from inferwatch.alerting._outbox import Outbox, OutboxEntry

__all__ = ["Attempt", "CommittedExecutor", "DeliveryHooks", "Executor", "InlineExecutor", "Job", "QueueStats",
           "RateWindow", "ReceiverQueue", "RetryPolicy", "ThreadExecutor"]

log = logging.getLogger("inferwatch.alerting")
MAX_IN_FLIGHT = 4  # concurrent attempts per receiver (one per group set)
MAX_ABANDONED = 4  # hung attempts a receiver may leave behind before it waits for them
MAX_RETRY_AFTER_S = 3600.0  # a service's Retry-After is honoured up to this


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Attempts, backoff (exponential with jitter) and the per-attempt timeout."""

    max_attempts: int
    initial_backoff: float
    max_backoff: float
    jitter: float
    attempt_timeout: float

    def backoff(self, attempts: int, rng: random.Random) -> float:
        """Seconds to wait after ``attempts`` failed attempts."""
        base = min(self.max_backoff, self.initial_backoff * 2.0 ** (attempts - 1))
        return base * (1 + self.jitter * (2 * rng.random() - 1))


class RateWindow:
    """At most ``count`` attempts per ``per`` seconds."""

    def __init__(self, count: int, per: float) -> None:
        self.count, self.per = count, per
        self._sent: list[float] = []

    def room(self, now: float) -> bool:
        """Whether an attempt may start now."""
        self._sent = [t for t in self._sent if t > now - self.per]
        return len(self._sent) < self.count

    def take(self, now: float) -> None:
        """Count an attempt."""
        self._sent.append(now)

    def next_room(self) -> float:
        """When the window has room again."""
        return min(self._sent) + self.per if len(self._sent) >= self.count else 0.0


@dataclass(eq=False)
class Attempt:
    """One call of a notifier for one or more outbox entries."""

    entries: list[OutboxEntry]
    n: Notification
    notifier: Notifier
    started: float
    deadline: float
    on_done: Callable[[], None]
    done: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None

    @property
    def thread_name(self) -> str:
        """The name of the thread a ``ThreadExecutor`` runs it on."""
        return f"notify-{self.notifier.name}"

    def run(self) -> None:
        """Call the notifier; keep its error; signal completion."""
        try:
            self.notifier.notify(self.n)
        except BaseException as exc:  # kept and judged on the pipeline's tick
            self.error = exc
        finally:
            self.done.set()
            self.on_done()


class DeliveryHooks(Protocol):
    """What the pipeline does with outcomes."""

    def owed(self, n: Notification) -> bool:
        """Whether ``n`` still needs sending (the notification log may say it was sent)."""
        ...

    def delivered(self, n: Notification, now: float) -> None:
        """Write the notification log and the record (before the entry leaves the outbox)."""
        ...

    def gave_up(self, n: Notification, error: str, now: float) -> None:
        """Record a final failure."""
        ...

    def attempted(self, receiver: str, error: str | None, now: float) -> None:
        """An attempt ended (``error`` ``None`` on success): the receiver's health."""
        ...

    def sender(self) -> str:
        """The HA replica sending now, named in each message (empty: no pair)."""
        ...


@dataclass(frozen=True, slots=True)
class QueueStats:
    """A receiver's queue at a moment."""

    receiver: str
    length: int
    oldest_age: float


class ReceiverQueue:
    """One receiver's deliveries: attempts with a timeout, retries with backoff, a rate window."""

    def __init__(self, name: str, notifier: Notifier, outbox: Outbox, policy: RetryPolicy,
                 hooks: DeliveryHooks, executor: Executor, rng: random.Random,
                 rate: RateWindow | None = None, wake: Callable[[], None] = lambda: None) -> None:
        self.name, self.notifier, self.policy = name, notifier, policy
        self._outbox, self._hooks, self._executor, self._rng = outbox, hooks, executor, rng
        self._rate = rate
        self._wake = wake
        self._in_flight: list[Attempt] = []
        self._abandoned: list[Attempt] = []
        self._held: set[int] = set()  # entries that waited for the rate window: sent merged

    def tick(self, now: float) -> None:
        """Judge finished and overdue attempts, then start what is due."""
        self.collect(now)
        self._start(now)
        self.collect(now)  # an inline attempt is already done

    def collect(self, now: float) -> None:
        """Judge finished and overdue attempts only (a shutdown's last step: nothing new starts)."""
        for a in list(self._in_flight):
            if a.done.is_set():
                self._in_flight.remove(a)
                self._judge(a, a.error, now)
            elif now >= a.deadline:
                self._in_flight.remove(a)
                self._abandoned.append(a)
                timeout = NotifyError(f"timed out after {self.policy.attempt_timeout:g}s", retryable=True)
                self._judge(a, timeout, now)
        self._abandoned = [a for a in self._abandoned if not a.done.is_set()]

    def _judge(self, a: Attempt, error: BaseException | None, now: float) -> None:
        if error is None:
            self._hooks.delivered(a.n, now)
            self._done(a, now, None)
            return
        attempts = max(e.attempts for e in a.entries) + 1
        if isinstance(error, NotifyError):
            if error.retryable and attempts < self.policy.max_attempts:
                self._retry(a, error, attempts, now)
                return
            verdict = f"gave up after {attempts} attempts" if error.retryable else "not retryable"
            msg = f"{self.notifier.name}: {verdict}: {error}"
            log.error("%s", msg)
        else:  # a notifier bug must not stop the pipeline
            log.error("%s: unexpected failure", self.notifier.name, exc_info=error)
            msg = f"{self.notifier.name}: failed: {error.__class__.__name__}"
        self._hooks.gave_up(a.n, msg, now)
        self._done(a, now, msg)

    def _retry(self, a: Attempt, error: NotifyError, attempts: int, now: float) -> None:
        delay = self.policy.backoff(attempts, self._rng)
        hint = getattr(error, "retry_after", None)  # the service's Retry-After, when it sent one
        if isinstance(hint, int | float) and hint > 0:
            delay = max(delay, min(float(hint), MAX_RETRY_AFTER_S))
        for e in a.entries:
            e.attempts, e.due, e.error = attempts, now + delay, str(error)
        self._outbox.update(a.entries)
        log.info("%s: attempt %d failed, retrying in %.3gs: %s", self.notifier.name, attempts, delay, error)
        self._hooks.attempted(self.name, str(error), now)

    def _done(self, a: Attempt, now: float, error: str | None) -> None:
        seqs = [e.seq for e in a.entries]
        self._outbox.remove(seqs)
        self._held.difference_update(seqs)
        self._hooks.attempted(self.name, error, now)

    def _start(self, now: float) -> None:
        if not self._capacity():  # a storm with every attempt slot taken: O(1), not O(owed)
            return
        busy = {e.seq for a in self._in_flight for e in a.entries}
        busy_keys = {e.key for a in self._in_flight for e in a.entries}
        due = (e for e in self._outbox.entries(self.name)
               if e.seq not in busy and e.key not in busy_keys and e.due <= now)
        stale: list[OutboxEntry] = []
        owed = self._owed(due, stale)  # judged as taken: not a storm's every entry on every tick
        try:
            for batch in self._batches(owed if self._rate is None else list(owed), now):
                self._launch(batch, now)
                if not self._capacity():
                    return
        finally:
            if stale:  # sent before a restart (the log says so): not owed again
                self._outbox.remove(e.seq for e in stale)
                self._held.difference_update(e.seq for e in stale)

    def _owed(self, due: Iterable[OutboxEntry], stale: list[OutboxEntry]) -> Iterator[OutboxEntry]:
        for e in due:
            if self._hooks.owed(e.n):
                yield e
            else:
                stale.append(e)

    def _capacity(self) -> bool:
        return len(self._in_flight) < MAX_IN_FLIGHT and len(self._abandoned) < MAX_ABANDONED

    def _batches(self, due: Iterable[OutboxEntry], now: float) -> Iterator[list[OutboxEntry]]:
        if self._rate is None:
            yield from ([e] for e in due)
            return
        held = [e for e in due if e.seq in self._held]
        if held and self._rate.room(now):  # what waited goes as one merged notification
            self._rate.take(now)
            self._held.difference_update(e.seq for e in held)
            yield held
        for e in (e for e in due if e not in held):
            if not self._held and self._rate.room(now):
                self._rate.take(now)
                yield [e]
            else:
                self._held.add(e.seq)

    def _launch(self, batch: list[OutboxEntry], now: float) -> None:
        n = batch[0].n if len(batch) == 1 else _merge(batch)
        sender = self._hooks.sender()
        if sender:  # who sends it is known only now (a takeover sends what the peer queued)
            n = replace(n, sender=sender)
        a = Attempt(batch, n, self.notifier, now, now + self.policy.attempt_timeout, self._wake)
        self._in_flight.append(a)
        self._executor.start(a)
        if a.done.is_set():  # inline: judged now, so records keep the tick's order
            self._in_flight.remove(a)
            self._judge(a, a.error, now)

    def next_wakeup(self) -> float | None:
        """The earliest due entry, attempt deadline or rate-window opening."""
        busy = {e.seq for a in self._in_flight for e in a.entries}
        times = [a.deadline for a in self._in_flight]
        times += [e.due for e in self._outbox.entries(self.name) if e.seq not in busy]
        if self._held and self._rate is not None:
            times.append(self._rate.next_room())
        return min(times, default=None)

    def stats(self, now: float) -> QueueStats:
        """Queue length and the age of the oldest owed notification."""
        entries = self._outbox.entries(self.name)
        oldest = min((e.created for e in entries), default=now)
        return QueueStats(self.name, len(entries), max(now - oldest, 0.0))

    def busy(self) -> set[int]:
        """Outbox entries whose send is in flight (a newer flush must not replace them)."""
        return {e.seq for a in self._in_flight for e in a.entries}

    def in_flight(self) -> int:
        """Attempts running now."""
        return len(self._in_flight)


def _merge(batch: list[OutboxEntry]) -> Notification:
    first = batch[0].n
    groups = {g.key: g for e in batch for g in e.n.groups}
    notes = tuple(dict.fromkeys(x for e in batch for x in e.n.notes))
    nid = hashlib.sha256("+".join(e.n.id for e in batch).encode()).hexdigest()[:32]
    return replace(first, groups=tuple(groups.values()), notes=notes, id=nid)
