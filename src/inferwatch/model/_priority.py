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

__all__ = ["Priority", "pinned"]

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

    def __init__(self, max_wait: float = 30.0, grace: float = 0.1) -> None:
        self.max_wait = max_wait
        """The longest one wait lasts (a round that hangs must not stop every query for good)."""
        self.grace = grace
        """CPU seconds a query may use before it waits for rounds (:meth:`wait_turn`'s ``used``)."""
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
