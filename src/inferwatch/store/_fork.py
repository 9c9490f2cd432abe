"""What a forked reader needs from a store: its memory held still around ``os.fork``, and a cheap count;
and what a read that must never wait needs: the memory's lock when it is free now.

``os.fork`` copies only the forking thread. A lock another thread holds at that moment stays held for
good in the child, and a structure it was changing stays half changed. :meth:`ForkReads.fork_guard`
holds the store's memory lock (index, head, newest samples: everything a read of the head takes) in
the forking thread around the fork, so the child gets the store as it stood between two appends.
The child must read the head only (no SQLite: the parent's connection and its file lock are not the
child's); ``fork_guard`` yields the head's first time so that the caller can check that under the lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from inferwatch.model import Matcher
from inferwatch.store._index import SeriesIndex

__all__ = ["ForkReads"]


class ForkReads:
    """``fork_guard``, ``held_if_free`` and ``count_matching`` for a store with an index and a head under
    one lock."""

    _lock: threading.RLock
    _index: SeriesIndex
    _head_from: float

    @contextmanager
    def fork_guard(self) -> Iterator[float]:
        """Hold the memory's lock (call ``os.fork`` inside); yields the time the head starts at."""
        with self._lock:
            yield self._head_from

    @contextmanager
    def held_if_free(self) -> Iterator[float | None]:
        """Hold the memory's lock when no other thread holds it now, yielding the time the head starts at
        (reads of the head inside then never wait); yield ``None`` at once when another thread holds it.
        For a small query on the event loop, which must not wait for an append or a retention pass."""
        if not self._lock.acquire(blocking=False):
            yield None
            return
        try:
            yield self._head_from
        finally:
            self._lock.release()

    def count_matching(self, matchers: Sequence[Matcher]) -> int:
        """How many series match ``matchers`` (from the index; no sample is read)."""
        with self._lock:
            return len(self._index.match(matchers))
