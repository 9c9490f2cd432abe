"""Series created in bulk leave the cyclic collector's sight: it would walk them again and again.

A request of 2,000 new series makes some 6,000 objects that live as long as
their series (label sets, pair tuples, head buffers); the cyclic garbage
collector walks each of them in its young generation, again in the middle
one, and again in every full collection, though reference counting is what
frees them (measured on remote write: 2-4 ms a collection, about 8 % of a
request of new series). ``serve`` already moves what it built at start out of
the collector's sight (``gc.freeze``); :class:`NewSeriesGc` does the same
after each batch that created many series.

A cycle that was garbage at the moment of a freeze would be kept with them,
so at most every ``full_every`` seconds the frozen objects are handed back
and collected once in full before the next freeze: such a cycle lives that
long at most.

A batch known in advance to make many such objects (a target's first scrape:
100,000 label sets and head buffers, half a million tracked objects) runs
inside :meth:`NewSeriesGc.making`: the collector waits meanwhile, and what the
batch made is frozen without the young generation ever walking it (that walk
was 12 % of a first scrape's CPU: 15 young collections of 50,000 objects).
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["FULL_EVERY_S", "MIN_SERIES", "NewSeriesGc"]

MIN_SERIES = 1_000
"""Series one batch must create before the objects made so far are frozen (fewer are not worth it)."""
FULL_EVERY_S = 600.0
"""Seconds between full collections of everything frozen (the longest a frozen garbage cycle lives)."""

_PAUSE_LOCK = threading.Lock()
_paused = [0, False]  # batches inside ``making`` now (every thread and instance), whether gc was enabled


class NewSeriesGc:
    """Freezes the objects made so far after a batch that created ``min_series`` series or more.

    ``monotonic``: the process's own seconds (not the server's clock, which a demo runs fast: this
    is about the process's memory, not the monitored time).

    >>> import gc
    >>> policy = NewSeriesGc()
    >>> policy.created(10), policy.created(5_000)
    (False, True)
    >>> gc.unfreeze()
    """

    def __init__(self, *, min_series: int = MIN_SERIES, full_every: float = FULL_EVERY_S,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self.min_series = min_series
        self.full_every = full_every
        self.freezes = 0
        self.full_collections = 0
        self._last_full = monotonic()
        self._lock = threading.Lock()

    def created(self, series: int) -> bool:
        """After a batch that created ``series`` series: freeze when there were enough (then ``True``),
        after a full collection when the last one is ``full_every`` seconds old."""
        if series < self.min_series:
            return False
        with self._lock:  # one thread at a time (the counts and the last full collection's time)
            now = self.monotonic()
            if now - self._last_full >= self.full_every:
                gc.unfreeze()
                gc.collect()
                self._last_full = now
                self.full_collections += 1
            gc.freeze()
            self.freezes += 1
        return True

    @contextmanager
    def making(self, created: Callable[[], int]) -> Iterator[None]:
        """Run a batch that may create many series with the collector paused; then :meth:`created`
        with ``created()`` (its objects frozen unwalked when there were enough), and the collector back
        as it was once no other batch is inside.

        >>> import gc
        >>> policy = NewSeriesGc(min_series=2)
        >>> with policy.making(lambda: 5):
        ...     gc.isenabled()
        False
        >>> gc.isenabled(), policy.freezes
        (True, 1)
        >>> gc.unfreeze()
        """
        with _PAUSE_LOCK:
            if not _paused[0]:
                _paused[1] = gc.isenabled()
                gc.disable()
            _paused[0] += 1
        try:
            yield
        finally:
            try:
                self.created(created())
            finally:
                with _PAUSE_LOCK:
                    _paused[0] -= 1
                    if not _paused[0] and _paused[1]:
                        gc.enable()
