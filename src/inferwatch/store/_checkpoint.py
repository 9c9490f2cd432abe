"""SQLite's WAL checkpoints on a thread of their own, off the append path.

In WAL mode with ``synchronous=NORMAL`` a commit never syncs the disk; a
checkpoint (copying the WAL back into the database file) does. SQLite runs one
inside whichever commit passes 1,000 pages, so one append in every few
megabytes waited for an fsync while holding the store's lock (35-45 ms on this
project's machines, stalling rule evaluation's reads as well). With the
:class:`Checkpointer` the store's connection never checkpoints; every
``every_bytes`` written, the appender sets an event and this thread runs a
``PASSIVE`` checkpoint on a second connection, which neither waits for the
store's lock nor blocks its writers.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from inferwatch.model import open_sqlite

__all__ = ["Checkpointer"]

log = logging.getLogger(__name__)
EVERY_BYTES = 4 << 20  # about SQLite's own 1,000 pages of 4 KiB


class Checkpointer:
    """A thread that checkpoints the WAL of ``path`` when told enough was written."""

    def __init__(self, path: Path, *, every_bytes: int = EVERY_BYTES) -> None:
        self.path = path
        self.every_bytes = every_bytes
        self.done = 0  # checkpoints run (for tests and self-metrics)
        self.failures = 0
        self._pending = 0
        self._asked = 0  # checkpoints asked for by ``sync`` ...
        self._answered = 0  # ... and the last of them a completed checkpoint started after
        self._due = threading.Event()
        self._ran = threading.Condition()
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="tsdb-checkpoint", daemon=True)
        self._thread.start()

    def wrote(self, nbytes: int) -> None:
        """Count bytes committed; wake the thread every ``every_bytes`` (called under the store's lock)."""
        self._pending += nbytes
        if self._pending >= self.every_bytes:
            self._pending = 0
            self._due.set()

    @property
    def running(self) -> bool:
        """Whether the thread is alive (until ``close``)."""
        return self._thread.is_alive()

    def wait_for(self, count: int, timeout: float) -> bool:
        """Whether ``count`` checkpoints have run, waiting up to ``timeout`` seconds for them."""
        with self._ran:
            return self._ran.wait_for(lambda: self.done >= count, timeout)

    def sync(self, timeout: float) -> bool:
        """Checkpoint everything committed so far: whether a checkpoint begun after this call ran.

        One that was already running when called may have missed the last commits (a ``PASSIVE``
        checkpoint copies what was committed when it began), so this waits for the next one.
        """
        with self._ran:
            self._asked += 1
            asked = self._asked
        self._due.set()
        with self._ran:
            return self._ran.wait_for(lambda: self._answered >= asked or self._stopping, timeout) \
                and self._answered >= asked

    def close(self) -> None:
        """Stop the thread (a checkpoint in progress finishes first)."""
        self._stopping = True
        self._due.set()
        with self._ran:
            self._ran.notify_all()  # a ``sync`` waiting gives up
        self._thread.join(timeout=60)

    def _run(self) -> None:
        try:
            conn = open_sqlite(self.path, wal=False, synchronous=None, timeout=10.0)  # the store set WAL
        except (OSError, sqlite3.Error) as exc:  # the store's own connection reports the file's problems
            log.warning("cannot open %s for checkpoints: %s; the WAL grows until the store closes",
                        self.path, exc)
            return
        try:
            while True:
                self._due.wait()
                self._due.clear()
                if self._stopping:
                    return
                with self._ran:
                    asked = self._asked  # what this checkpoint answers: it begins after those calls
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                except sqlite3.Error as exc:
                    if not self.failures:  # once: the next ones say the same (a full disk)
                        log.warning("checkpoint of %s failed: %s", self.path, exc)
                    self.failures += 1
                    continue
                with self._ran:
                    self.done += 1
                    self._answered = asked
                    self._ran.notify_all()
        finally:
            conn.close()
