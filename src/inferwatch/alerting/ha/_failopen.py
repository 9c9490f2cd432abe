"""A lone server's alerting state file, failing open when its disk refuses a write.

A full disk, a read-only mount or an I/O error must not stop a page. The transaction the
file refused (the outbox row, the notification log, the history event) commits instead
to a copy of the state in memory: the fail-open :class:`Journal` an HA replica writes to
while its PostgreSQL is gone, here seeded with the file's rows. Its sends start as
usual, and every later write and read goes to the copy. :meth:`FailOpenStateDB.recover`
(every evaluation round, from the server's storage health) writes the journal back to
the file in one transaction once it takes writes again: what was sent and recorded in
memory is on disk as it was, so nothing goes twice. Logged once when the file starts
refusing writes and once when it takes them again; a stop while it still refuses them
loses what only memory holds (logged, with how many writes).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from inferwatch.alerting._state import StateCursor, StateDB
from inferwatch.alerting.ha._journal import Journal
from inferwatch.store import write_failure

__all__ = ["FailOpenStateDB"]

log = logging.getLogger("inferwatch.alerting")
_REFUSED = frozenset({"disk_full", "read_only", "io_error"})  # the file, not the statement, is at fault


def refused(exc: BaseException) -> bool:
    """Whether ``exc`` says the file cannot take writes now (as opposed to a bad statement)."""
    return isinstance(exc, sqlite3.Error) and write_failure(exc) in _REFUSED


def _why(exc: BaseException) -> str:
    return f"{write_failure(exc)}: {exc}" if isinstance(exc, Exception) else str(exc)


class _Recording:
    """A transaction on the file that moves, with what it did so far, to the journal if refused."""

    def __init__(self, db: FailOpenStateDB) -> None:
        self._db = db
        self._done: list[tuple[str, Any, bool]] = []  # (sql, parameters, many)
        self._tx: AbstractContextManager[StateCursor] | None = None
        self._local: StateCursor | None = None
        if db.journal is not None:
            self._go_local(None)
        else:
            db.conn.execute("BEGIN")

    def _go_local(self, exc: BaseException | None) -> None:
        conn = self._db.conn
        if conn.in_transaction:  # a full disk may have rolled it back already
            conn.execute("ROLLBACK")
        if exc is not None:
            self._db.hold(exc)
        assert self._db.journal is not None
        self._tx = self._db.journal.transaction()
        self._local = local = self._tx.__enter__()
        self._db.held_total += 1
        for sql, params, many in self._done:  # what this transaction did on the file, again here
            (local.executemany if many else local.execute)(sql, params)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        if self._local is not None:
            return self._local.execute(sql, parameters)
        try:
            cur = self._db.conn.execute(sql, parameters)
        except sqlite3.Error as exc:
            if not refused(exc):
                raise
            self._go_local(exc)
            return self.execute(sql, parameters)
        if sql.lstrip()[:6].upper() != "SELECT":
            self._done.append((sql, parameters, False))
        return cur

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        rows = list(parameters)
        if self._local is not None:
            return self._local.executemany(sql, rows)
        try:
            cur = self._db.conn.executemany(sql, rows)
        except sqlite3.Error as exc:
            if not refused(exc):
                raise
            self._go_local(exc)
            return self.executemany(sql, rows)
        self._done.append((sql, rows, True))
        return cur

    def finish(self, ok: bool) -> None:
        if self._local is None:
            conn = self._db.conn
            if not ok:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                return
            try:
                conn.execute("COMMIT")
                return
            except sqlite3.Error as exc:
                if not refused(exc):
                    if conn.in_transaction:
                        conn.execute("ROLLBACK")
                    raise
                self._go_local(exc)
        assert self._tx is not None
        if ok:
            self._tx.__exit__(None, None, None)
        else:
            self._tx.__exit__(RuntimeError, RuntimeError("rolled back"), None)


class FailOpenStateDB(StateDB):
    """The alerting state in a SQLite file that, while the file refuses writes, goes on in memory.

    ``journal`` is ``None`` while the file takes writes; ``recover()`` writes it back.
    ``held_total``: transactions kept in memory (counted), ``error``: why the file refused.
    """

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)
        self.journal: Journal | None = None
        self.held_total = 0
        self.error = ""
        self._cursor: _Recording | None = None

    @property
    def conn(self) -> sqlite3.Connection:
        """The file's connection (under the lock)."""
        return self._conn

    def hold(self, exc: BaseException) -> None:
        """The file refused a write: from now on the state lives in a copy in memory."""
        self.error = _why(exc)
        if self.journal is None:
            log.error("the alerting state cannot be written to %s (%s): notifications go on, and what "
                      "they must remember is held in memory until the file takes writes again",
                      self.path, exc)
            self.journal = Journal(seed=self)

    @contextmanager
    def transaction(self) -> Iterator[StateCursor]:  # type: ignore[override]
        """A write transaction: in the file, or in memory while the file refuses writes."""
        with self._lock:
            if self._depth:  # joins the transaction open on this thread
                self._depth += 1
                try:
                    yield self._cursor  # type: ignore[misc]
                finally:
                    self._depth -= 1
                return
            self._depth = 1
            try:
                cur = self._cursor = _Recording(self)
                try:
                    yield cur
                except BaseException:
                    cur.finish(ok=False)
                    raise
                cur.finish(ok=True)
            except BaseException:
                self._after.clear()  # what waited for these writes never starts
                raise
            finally:
                self._depth, self._cursor = 0, None
            after, self._after = self._after, []
        for fn in after:
            fn()

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Rows of a read query (from the copy in memory while the file refuses writes)."""
        with self._lock:
            if self.journal is not None:
                return self.journal.db.query(sql, params)
            return super().query(sql, params)

    def pending(self) -> int:
        """Writes held in memory, not yet in the file."""
        with self._lock:
            return 0 if self.journal is None else self.journal.pending()

    def recover(self) -> bool:
        """Write what memory holds back to the file; whether the file has it all now (``True`` at once
        when nothing is held). A file still refusing writes stays as it is, silently."""
        with self._lock:
            if self.journal is None:
                return True
            try:
                n = self.journal.write_back(self._replay)
            except sqlite3.Error as exc:
                if not refused(exc):
                    log.exception("writing the held alerting state back to %s failed", self.path)
                return False
            self.journal.close()
            self.journal, self.error = None, ""
        log.warning("the alerting state is written to %s again: %d writes held in memory meanwhile are "
                    "in the file", self.path, n)
        return True

    def _replay(self, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        conn = self._conn
        conn.execute("BEGIN")
        try:
            for sql, params in statements:
                conn.execute(sql, params)
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def close(self) -> None:
        """Write back what memory holds if the file takes it now (else say what is lost), then close."""
        if not self.recover():
            log.error("stopping with %d writes of the alerting state that %s refused (%s): they are lost; "
                      "a notification sent meanwhile may be sent again after the restart",
                      self.pending(), self.path, self.error)
        with self._lock:
            if self.journal is not None:
                self.journal.close()
        super().close()
