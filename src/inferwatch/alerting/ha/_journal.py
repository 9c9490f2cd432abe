"""The local journal of an HA replica: what it wrote while the shared database was gone.

A SQLite file with the alerting schema and a ``journal`` table. While PostgreSQL cannot be
reached, every write goes here (so the stores' results, row counts and new ids, stay
right) and is logged in order; when the database returns, :meth:`Journal.write_back`
replays the log there, so no acknowledgement, silence or history event of those minutes
is lost. Outbox rows written here get ids far above PostgreSQL's (from 2**40), so a row
sent and deleted during the outage is deleted by the same id once written back.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from inferwatch.alerting._state import StateDB

__all__ = ["LOCAL_SEQ_START", "Journal", "JournalCursor"]

LOCAL_SEQ_START = 1 << 40
_JOURNAL = """CREATE TABLE IF NOT EXISTS journal (
  n INTEGER PRIMARY KEY AUTOINCREMENT, sql TEXT NOT NULL, params TEXT NOT NULL, rowid_ INTEGER)"""
_OUTBOX_INSERT = re.compile(r"^\s*INSERT INTO outbox \(", re.IGNORECASE)


class JournalCursor:
    """A local transaction whose writes are also logged for the write-back."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        params = tuple(parameters)
        cur = self._conn.execute(sql, params)
        if not sql.lstrip().upper().startswith(("CREATE", "SELECT")):
            rowid = cur.lastrowid if _OUTBOX_INSERT.match(sql) else None
            self._conn.execute("INSERT INTO journal (sql, params, rowid_) VALUES (?,?,?)",
                               (sql, json.dumps(params), rowid))
        return cur

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> Any:
        total = 0
        for p in parameters:
            total += self.execute(sql, p).rowcount
        return _Count(total)


class _Count:
    __slots__ = ("lastrowid", "rowcount")

    def __init__(self, rowcount: int) -> None:
        self.rowcount, self.lastrowid = rowcount, None


class Journal:
    """The journal file (``":memory:"`` for tests): ``transaction()``, ``query()``, ``write_back(run)``.

    ``seed``: start as a copy of that state (a lone server's own file, which it will be written
    back to: its ids go on from the file's, so the written-back rows keep theirs).
    """

    def __init__(self, path: str | Path = ":memory:", *, seed: StateDB | None = None) -> None:
        self.db = StateDB(path)
        if seed is not None:
            self.db.copy_from(seed)
        with self.db.transaction() as c:
            c.execute(_JOURNAL)
            numbered = c.execute("SELECT 1 FROM sqlite_sequence WHERE name='outbox'").fetchall()
            if seed is None and not numbered:
                c.execute("INSERT INTO sqlite_sequence (name, seq) VALUES ('outbox', ?)", (LOCAL_SEQ_START,))

    @contextmanager
    def transaction(self) -> Iterator[JournalCursor]:
        """A local write transaction, logged."""
        with self.db.transaction() as c:
            yield JournalCursor(c)

    def create(self, sql: str) -> None:
        """A store's own ``CREATE`` (its table here too)."""
        with self.db.transaction() as c:
            c.execute(sql)

    def pending(self) -> int:
        """Writes not yet written back."""
        return int(str(self.db.query("SELECT count(*) FROM journal")[0][0]))

    def write_back(self, run: Callable[[list[tuple[str, tuple[Any, ...]]]], None]) -> int:
        """Hand the logged writes, in order, to ``run`` (one transaction there); forget them once
        it returns. Returns how many there were."""
        rows = self.db.query("SELECT n, sql, params, rowid_ FROM journal ORDER BY n")
        if not rows:
            return 0
        statements = []
        for _, sql, params, rowid in rows:
            p = tuple(json.loads(str(params)))
            if rowid is not None:  # the outbox row keeps its local id: later updates name it
                statements.append((_OUTBOX_INSERT.sub("INSERT INTO outbox (seq, ", str(sql), count=1)
                                   .replace("VALUES (", "VALUES (?,", 1), (rowid, *p)))
            else:
                statements.append((str(sql), p))
        run(statements)
        with self.db.transaction() as c:  # written back: the next outage starts from a clean copy
            tables = [str(r[0]) for r in c.execute("SELECT name FROM sqlite_master WHERE type='table' "
                                                   "AND name NOT LIKE 'sqlite_%'").fetchall()]
            for table in tables:
                c.execute(f"DELETE FROM {table}")
        return len(rows)

    def close(self) -> None:
        """Close the file."""
        self.db.close()
