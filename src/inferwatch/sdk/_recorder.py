"""The bounded queue between request threads and the one background aggregation thread.

Producers only ``len()`` and ``append`` on a ``collections.deque`` (both atomic
under the GIL, no lock taken); the worker drains it in batches with
``popleft``. With several producers the length check races, so the queue can
hold up to (producers - 1) items above capacity: bounded, never blocking.
A drop is rare and takes a lock only to count exactly.

``flush`` appends a marker (never dropped) and waits for the worker to reach
it: everything enqueued before the call has then been aggregated.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["FLUSH", "Recorder", "group_by_kind"]

log = logging.getLogger("inferwatch.sdk")

FLUSH = "__flush__"
"""Kind of the marker item ``flush`` appends; its payload is the Event to set."""

POLL_S = 0.005
"""How often the worker looks at the queue when nobody wakes it (real seconds)."""

BatchHandler = Callable[[list[tuple[Any, ...]]], None]


class Recorder:
    """A bounded deque plus the worker thread that hands batches to ``handle``."""

    def __init__(self, capacity: int, handle: BatchHandler, *, name: str = "inferwatch-sdk") -> None:
        self.capacity = capacity
        self.queue: deque[tuple[Any, ...]] = deque()
        self.dropped: dict[str, int] = {}
        self._handle = handle
        self._drop_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def drop(self, kind: str) -> None:
        """Count one observation of ``kind`` that did not fit (called by producers)."""
        with self._drop_lock:
            self.dropped[kind] = self.dropped.get(kind, 0) + 1

    def dropped_counts(self) -> dict[str, int]:
        """A copy of the drop counters by kind."""
        with self._drop_lock:
            return dict(self.dropped)

    @property
    def running(self) -> bool:
        """Whether the worker thread is alive."""
        return self._thread.is_alive()

    def flush(self, timeout: float) -> bool:
        """Wait until everything enqueued before this call is handled; False on timeout."""
        if not self.running:
            self._drain()
            return True
        done = threading.Event()
        self.queue.append((FLUSH, done))
        self._wake.set()
        return done.wait(timeout)

    def close(self, timeout: float) -> None:
        """Handle what is queued and stop the thread (idempotent; the owner stops producers)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)
        self._drain()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(POLL_S)
            self._wake.clear()  # before draining, so a wake during the drain is not lost
            self._drain()
        self._drain()

    def _drain(self) -> None:
        queue = self.queue
        while queue:
            batch = _take(queue, min(len(queue), 65536))
            markers = [item[1] for item in batch if item[0] == FLUSH]
            try:
                self._handle(batch)
            except Exception:
                log.exception("inferwatch sdk: aggregating a batch of %d failed; continuing", len(batch))
            for event in markers:
                event.set()


def _take(queue: deque[tuple[Any, ...]], n: int) -> list[tuple[Any, ...]]:
    # Only close() after a timed-out join drains concurrently with the worker.
    batch: list[tuple[Any, ...]] = []
    try:
        for _ in range(n):
            batch.append(queue.popleft())
    except IndexError:
        pass
    return batch


def group_by_kind(batch: Sequence[tuple[Any, ...]]) -> dict[str, list[tuple[Any, ...]]]:
    """Split a batch into lists per kind (the item's first element), markers left out."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for item in batch:
        kind = item[0]
        if kind != FLUSH:
            out.setdefault(kind, []).append(item)
    return out
