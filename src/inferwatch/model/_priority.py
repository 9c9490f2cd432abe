"""Rule evaluation first: while a round runs, query threads wait at their next deadline check.

Every thread of the server shares one interpreter lock, so five query threads that
each compute for seconds leave a rule round a sixth of the CPU (a 0.35 s round took
3.5-5.2 s under five dashboard clients, and rounds were skipped). The evaluation loop
holds :meth:`Priority.first` while a round runs; query threads call
:meth:`Priority.wait_turn` at the checks they already make (every 1,024 items of a
loop, every step, every store read) and sleep there until the round is done, so the
round gets the CPU to itself. A thread inside a store's lock never waits (the round may
need that lock): stores mark those sections with :func:`pinned`.

A short query does not wait: one that has used less than :attr:`Priority.grace` of its
own CPU goes on (the dashboard's panels take ~10-50 ms; making them wait for a 3 s
round made their p99 8-17 times Prometheus's). Only the heavy ones step aside, and a
short one costs the round no more than its grace.

Among queries, the one that has used the least CPU goes first (least attained service):
a query holds a :meth:`Priority.short` ticket from its start until it has used
:attr:`Priority.short_cpu` of CPU (or until its answer is sent), and a query past that
waits at its checks (:meth:`Priority.make_way`) while any ticket is held. Five dashboard
clients keep four heavy queries running at once; under one interpreter lock a 2 ms panel
shared it with them at every hand-over and took 17-21 ms (Prometheus: 6 ms on two cores).
A heavy query loses the panels' few milliseconds; no query waits on a cost estimate.

>>> p = Priority()
>>> with p.first():
...     p.busy
True
>>> p.wait_turn()  # nothing running: returns at once
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Priority", "ShortTicket", "pinned"]

_local = threading.local()


@contextmanager
def pinned() -> Iterator[None]:
    """Mark the calling thread as inside a shared lock: :meth:`Priority.wait_turn` does not wait."""
    _local.pinned = getattr(_local, "pinned", 0) + 1
    try:
        yield
    finally:
        _local.pinned -= 1


class Priority:
    """Who goes first: the holders of :meth:`first` (rule rounds) before the callers of :meth:`wait_turn`."""

    def __init__(self, max_wait: float = 30.0, grace: float = 0.1, short_cpu: float = 0.02,
                 short_wait: float = 0.25) -> None:
        self.max_wait = max_wait
        """The longest one wait lasts (a round that hangs must not stop every query for good)."""
        self.grace = grace
        """CPU seconds a query may use before it waits for rounds (:meth:`wait_turn`'s ``used``)."""
        self.short_cpu = short_cpu
        """CPU seconds a query counts as short: until then longer ones make way (:meth:`make_way`)."""
        self.short_wait = short_wait
        """The longest one :meth:`make_way` lasts (a short query stuck on a lock must not stop the rest)."""
        self._short = 0
        self._no_short = threading.Event()
        self._no_short.set()
        self.waited_s = 0.0
        """Seconds query threads spent waiting, all together (the server's ``/metrics``)."""
        self._idle = threading.Event()
        self._idle.set()
        self._holders = 0
        self._lock = threading.Lock()

    @property
    def busy(self) -> bool:
        """Whether a holder is running now."""
        return not self._idle.is_set()

    @contextmanager
    def first(self) -> Iterator[None]:
        """Run the block ahead of every thread that calls :meth:`wait_turn`."""
        with self._lock:
            self._holders += 1
            self._idle.clear()
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if not self._holders:
                    self._idle.set()

    def short(self) -> ShortTicket:
        """A ticket held while a short query runs; :meth:`ShortTicket.leave` when it ends or stops
        being short (leaving twice is leaving once)."""
        with self._lock:
            self._short += 1
            self._no_short.clear()
        return ShortTicket(self)

    def _leave_short(self) -> None:
        with self._lock:
            self._short -= 1
            if not self._short:
                self._no_short.set()

    def make_way(self, used: float) -> None:
        """Wait (at most :attr:`short_wait`) while a short query runs, for a query that has ``used``
        :attr:`short_cpu` or more and holds no ticket; at once otherwise or when pinned."""
        if used < self.short_cpu or self._no_short.is_set() or getattr(_local, "pinned", 0) > 0:
            return
        t = time.monotonic()
        self._no_short.wait(self.short_wait)
        self.waited_s += time.monotonic() - t

    def wait_turn(self, used: float | None = None) -> None:
        """Wait (at most ``max_wait``) while a holder runs; at once when none does, when pinned, or
        when the caller has ``used`` less than :attr:`grace` CPU seconds so far."""
        if self._idle.is_set() or getattr(_local, "pinned", 0) > 0:
            return
        if used is not None and used < self.grace:
            return
        t = time.monotonic()
        self._idle.wait(self.max_wait)
        self.waited_s += time.monotonic() - t


class ShortTicket:
    """A short query's place ahead of longer ones (:meth:`Priority.short`)."""

    def __init__(self, priority: Priority) -> None:
        self._priority: Priority | None = priority

    @property
    def held(self) -> bool:
        """Whether the ticket is still held."""
        return self._priority is not None

    def leave(self) -> None:
        """Give the place up (once; later calls do nothing)."""
        p, self._priority = self._priority, None
        if p is not None:
            p._leave_short()
