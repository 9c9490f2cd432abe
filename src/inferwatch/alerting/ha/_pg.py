"""The alerting state in PostgreSQL: the :class:`~inferwatch.alerting.StateStore` of an HA pair.

One connection per replica, used under a lock as the SQLite one is. When the database
cannot be reached, writes go to the replica's local :class:`Journal` at once (nothing
waits on a dead database: the stores' callers are the evaluation and delivery paths)
until :meth:`PgStateDB.recover` finds it again and writes the journal back; the replica's
loop calls it. Errors name the database by its URL without the password, and the cause.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from inferwatch._exceptions import StoreError
from inferwatch.alerting._state import StateCursor
from inferwatch.alerting.ha._journal import Journal
from inferwatch.alerting.ha._schema import MIGRATIONS, SCHEMA_LOCK, translate
from inferwatch.settings import Secret, redact_url

if TYPE_CHECKING:
    import psycopg

__all__ = ["PgStateDB", "db_cause", "load_psycopg", "schema_version"]

log = logging.getLogger("inferwatch.alerting.ha")
CONNECT_TIMEOUT_S = 3
STATEMENT_TIMEOUT_MS = 3000  # a hung database fails the call; the caller goes on locally (fail open)


class _Result:
    __slots__ = ("lastrowid", "rowcount")

    def __init__(self, rowcount: int, lastrowid: int | None) -> None:
        self.rowcount, self.lastrowid = rowcount, lastrowid


class _PgCursor:
    """A transaction in PostgreSQL that moves to the journal if the database goes away in it."""

    def __init__(self, db: PgStateDB) -> None:
        self._db = db
        self._done: list[tuple[str, tuple[Any, ...]]] = []
        self._local: StateCursor | None = None
        self._local_tx: Any = None
        self._conn: psycopg.Connection[Any] | None = None
        if db.up:
            try:
                self._conn = db.connection()
                self._conn.execute("BEGIN")
            except (StoreError, db.pg.OperationalError) as exc:
                db.went_down(exc)
                self._conn = None
        if self._conn is None:
            self._go_local()

    def _go_local(self) -> None:
        self._local_tx = self._db.journal.transaction()
        self._local = self._local_tx.__enter__()
        for sql, params in self._done:  # what this transaction already did, again here
            self._local.execute(sql, params)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        params = tuple(parameters)
        st = translate(sql)
        if st.skip:
            self._db.journal.create(sql)
            return _Result(0, None)
        if self._local is None and self._conn is not None:
            try:
                cur = self._conn.execute(st.sql, params)
                last = int(cur.fetchone()[0]) if st.returning else None  # type: ignore[index]
                self._done.append((sql, params))
                return _Result(cur.rowcount, last)
            except self._db.pg.OperationalError as exc:
                self._db.went_down(exc)
                self._go_local()
            except self._db.pg.Error as exc:
                raise StoreError(f"ha: database {self._db.path}: {db_cause(exc)}") from None
        assert self._local is not None
        return self._local.execute(sql, params)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> _Result:
        total = 0
        for p in parameters:
            total += int(self.execute(sql, p).rowcount)
        return _Result(total, None)

    def finish(self, ok: bool) -> None:
        if self._local is None and self._conn is not None:
            try:
                self._conn.execute("COMMIT" if ok else "ROLLBACK")
                return
            except self._db.pg.OperationalError as exc:
                self._db.went_down(exc)
                if not ok:
                    return
                self._go_local()  # the commit may or may not have landed: written back once more
        if self._local_tx is not None:
            self._local_tx.__exit__(None, None, None) if ok else self._local_tx.__exit__(
                StoreError, StoreError("rolled back"), None)


def load_psycopg() -> Any:
    """The ``psycopg`` module; ``StoreError`` saying how to install it when it is not."""
    try:
        import psycopg
    except ImportError:
        raise StoreError("ha: PostgreSQL needs psycopg: pip install 'inferwatch[ha]'") from None
    return psycopg


class PgStateDB:
    """The shared alerting state in PostgreSQL (schema created or migrated on open).

    ``StoreError`` naming the URL (without its password) and the cause when the database
    cannot be reached at start or its schema is newer than this inferwatch. ``journal``:
    where writes go while the database is gone (a SQLite file; ``":memory:"`` by default).
    """

    def __init__(self, url: Secret, journal: str | Path = ":memory:") -> None:
        self._url = url
        self.path = redact_url(url.reveal())
        self._lock = threading.RLock()
        self.pg = load_psycopg()
        self._conn: psycopg.Connection[Any] | None = None
        self.up = True
        """False from a failure until ``recover`` wrote the journal back."""
        self._cursor: _PgCursor | None = None  # the transaction open on the thread holding the lock
        self._after: list[Callable[[], None]] = []
        self.last_error = ""
        with self._lock:
            try:
                self._migrate(self.connection())
            except BaseException:
                self.close()  # no connection left open behind the error
                raise
        self.journal = Journal(journal)

    def connection(self) -> psycopg.Connection[Any]:
        """The open connection (opened again when lost); ``StoreError`` when it cannot be."""
        if self._conn is not None and not self._conn.closed and not self._conn.broken:
            return self._conn
        try:
            self._conn = self.pg.connect(
                self._url.reveal(), autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
        except self.pg.Error as exc:
            raise StoreError(f"ha: cannot reach the database {self.path}: {db_cause(exc)}") from None
        return self._conn

    def went_down(self, exc: BaseException) -> None:
        """The database failed: writes go to the journal until ``recover``."""
        if self.up:
            log.error("ha: the database %s is gone (%s): writing to the local journal", self.path,
                      db_cause(exc))
        self.up, self.last_error = False, db_cause(exc)

    def _migrate(self, conn: psycopg.Connection[Any]) -> None:
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
                have = schema_version(conn)
                if have > len(MIGRATIONS):
                    raise StoreError(f"ha: the database {self.path} has schema version {have}, newer than "
                                     f"this inferwatch's {len(MIGRATIONS)}: upgrade inferwatch")
                for step in MIGRATIONS[have:]:
                    for stmt in step.split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                conn.execute("DELETE FROM schema_version")
                conn.execute("INSERT INTO schema_version VALUES (%s)", (max(have, len(MIGRATIONS)),))
        except self.pg.Error as exc:
            raise StoreError(f"ha: cannot set up the schema in {self.path}: {db_cause(exc)}") from None

    def recover(self) -> int:
        """Reach the database again and write the journal back (then writes go there again).

        Returns how many journaled writes went back; ``StoreError`` while it is still gone.
        """
        with self._lock:
            conn = self.connection()
            try:
                n = self.journal.write_back(lambda stmts: self._replay(conn, stmts))
            except self.pg.Error as exc:
                self.went_down(exc)
                raise StoreError(f"ha: database {self.path}: {db_cause(exc)}") from None
            if not self.up:
                log.warning("ha: the database %s is back: %d writes of the outage written back", self.path, n)
            self.up = True
            return n

    @staticmethod
    def _replay(conn: psycopg.Connection[Any], statements: list[tuple[str, tuple[Any, ...]]]) -> None:
        with conn.transaction():
            for sql, params in statements:
                st = translate(sql)
                if not st.skip:
                    conn.execute(st.sql.removesuffix(f" RETURNING {st.returning}"), params)

    @contextmanager
    def transaction(self) -> Iterator[StateCursor]:
        """A write transaction (committed on exit, rolled back on error): in PostgreSQL, or in the
        local journal while it is gone. One opened inside another on the same thread joins it."""
        with self._lock:
            if self._cursor is not None:
                yield self._cursor
                return
            cur = self._cursor = _PgCursor(self)
            try:
                yield cur
            except BaseException:
                self._after.clear()  # what waited for these writes never starts
                cur.finish(ok=False)
                raise
            else:
                cur.finish(ok=True)
            finally:
                self._cursor = None
            after, self._after = self._after, []
        for fn in after:
            fn()

    def after_commit(self, fn: Callable[[], None]) -> None:
        """Call ``fn`` once the transaction open on this thread has committed (at once when none is)."""
        with self._lock:
            if self._cursor is not None:
                self._after.append(fn)
                return
        fn()

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Rows of a read query (from the journal's copy while the database is gone)."""
        with self._lock:
            if self.up:
                try:
                    return list(self.connection().execute(translate(sql).sql, params).fetchall())
                except (StoreError, self.pg.OperationalError) as exc:
                    self.went_down(exc)
                except self.pg.Error as exc:
                    raise StoreError(f"ha: database {self.path}: {db_cause(exc)}") from None
            return self.journal.db.query(sql, params)

    def shared_query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Rows from PostgreSQL only (the lease, the replicas): ``StoreError`` while it is gone."""
        with self._lock:
            try:
                return list(self.connection().execute(translate(sql).sql, params).fetchall())
            except self.pg.Error as exc:
                self.went_down(exc)
                raise StoreError(f"ha: database {self.path}: {db_cause(exc)}") from None

    def shared_write(self, sql: str, params: tuple[object, ...] = ()) -> int:
        """One statement in PostgreSQL only (never journaled): the rows it changed; ``StoreError``
        while the database is gone."""
        with self._lock:
            try:
                return int(self.connection().execute(translate(sql).sql, params).rowcount)
            except self.pg.Error as exc:
                self.went_down(exc)
                raise StoreError(f"ha: database {self.path}: {db_cause(exc)}") from None

    def close(self) -> None:
        """Close the connection and the journal."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            journal = getattr(self, "journal", None)
            if journal is not None:
                journal.close()


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The schema version the database holds (0: none yet)."""
    row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0]) if row is not None and row[0] is not None else 0


def db_cause(exc: BaseException) -> str:
    """A database error's first line (what it says without psycopg's detail lines)."""
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
