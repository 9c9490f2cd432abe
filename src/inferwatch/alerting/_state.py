"""The pipeline's durable state: one SQLite file (silences, notification log, alerts, actions, outbox).

Every store writes through the narrow :class:`StateStore` interface (a transaction, a
query, portable SQL), so the same stores run over SQLite here and over PostgreSQL in an
HA pair (``alerting.ha``): one logic, two implementations.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from inferwatch._exceptions import StoreError
from inferwatch.model import open_sqlite

__all__ = ["StateCursor", "StateDB", "StateStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS silences (
  id TEXT PRIMARY KEY, matchers TEXT NOT NULL, starts_at REAL NOT NULL, ends_at REAL NOT NULL,
  created_by TEXT NOT NULL, comment TEXT NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS nflog (
  receiver TEXT NOT NULL, group_key TEXT NOT NULL, firing TEXT NOT NULL, resolved TEXT NOT NULL,
  sent_at REAL NOT NULL, PRIMARY KEY (receiver, group_key));
CREATE TABLE IF NOT EXISTS alerts (
  fingerprint TEXT PRIMARY KEY, body TEXT NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS actions (
  action TEXT NOT NULL, fingerprint TEXT NOT NULL, episode REAL NOT NULL, alertname TEXT NOT NULL,
  labels TEXT NOT NULL, phase TEXT NOT NULL, outcome TEXT NOT NULL, ok INTEGER NOT NULL,
  t REAL NOT NULL, PRIMARY KEY (action, fingerprint, episode, phase));
CREATE TABLE IF NOT EXISTS digest (
  receiver TEXT NOT NULL, fingerprint TEXT NOT NULL, body TEXT NOT NULL, first_seen REAL NOT NULL,
  last_seen REAL NOT NULL, PRIMARY KEY (receiver, fingerprint));
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notifications (
  id INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL, receiver TEXT NOT NULL,
  body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, receiver TEXT NOT NULL, key TEXT NOT NULL,
  body TEXT NOT NULL, attempts INTEGER NOT NULL, due REAL NOT NULL, created REAL NOT NULL,
  error TEXT NOT NULL);
"""


class StateCursor(Protocol):
    """What a transaction offers: statements whose results have ``rowcount`` and ``lastrowid``."""

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        """Run one statement."""

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        """Run one statement per parameter row."""


class StateStore(Protocol):
    """Where the stores keep the alerting state: SQLite (:class:`StateDB`) or PostgreSQL."""

    path: str
    """Where it is, for messages (a database URL without its password)."""

    def transaction(self) -> AbstractContextManager[StateCursor]:
        """A write transaction (committed on exit, rolled back on error); one opened inside another
        on the same thread joins it."""

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the transaction open on this thread has committed (at once when none is)."""

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Rows of a read query."""

    def close(self) -> None:
        """Close it."""


class StateDB:
    """A thread-safe SQLite connection with the pipeline's schema.

    >>> db = StateDB(":memory:")
    >>> db.query("SELECT count(*) FROM silences")
    [(0,)]
    """

    def __init__(self, path: str | Path = ":memory:") -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = open_sqlite(self.path, schema=_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open alerting state {self.path}: {exc}") from exc
        self._lock = threading.RLock()
        self._depth = 0  # transactions open on the thread holding the lock
        self._after: list[Callable[[], None]] = []  # run once the outermost transaction commits

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (committed on exit, rolled back on error).

        One opened inside another (on the same thread) joins it: the writes of a whole batch of
        alerts commit together, once (a storm's ingest is one commit, not one per table).
        """
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self._conn
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            try:
                self._conn.execute("BEGIN")
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException:
                self._after.clear()  # what waited for these writes never starts
                if self._conn.in_transaction:  # a full disk has rolled it back already: keep its error
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0
            after, self._after = self._after, []
        for fn in after:
            fn()

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the transaction open on this thread has committed (at once when none is).

        A send or an action run starts only after the write that owes it (the outbox row, the
        ledger's claim) is on disk, even when a whole tick's writes are one transaction.
        """
        with self._lock:
            if self._depth:
                self._after.append(fn)
                return
        fn()

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Rows of a read query."""
        with self._lock:
            return list(self._conn.execute(sql, params))

    def copy_from(self, source: StateDB) -> None:
        """Make this database a copy of ``source`` (SQLite's backup API: a consistent snapshot)."""
        with source._lock, self._lock:
            source._conn.backup(self._conn)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
