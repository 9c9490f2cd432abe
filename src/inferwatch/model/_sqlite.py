"""One way to open a SQLite file: every store, state file, spool and queue of inferwatch opens here.

Autocommit (``isolation_level=None``: callers write ``BEGIN`` where they need a
transaction), usable from any thread (each caller holds its own lock), WAL and the
``synchronous`` level the caller's durability needs, a busy timeout, the schema.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:  # imported when used: the SDK imports model, and needs no SQLite until then
    import sqlite3

__all__ = ["open_sqlite"]

Synchronous = Literal["OFF", "NORMAL", "FULL"]


def open_sqlite(path: str | os.PathLike[str], *, wal: bool = True, synchronous: Synchronous | None = "NORMAL",
                timeout: float = 5.0, schema: str = "") -> sqlite3.Connection:
    """A connection to ``path`` (its directory made; ``":memory:"`` too); ``sqlite3.Error`` or
    ``OSError`` when it cannot be opened: the caller names the file in its own error.

    >>> conn = open_sqlite(":memory:", schema="CREATE TABLE t (x)")
    >>> conn.execute("INSERT INTO t VALUES (1)").rowcount, conn.in_transaction
    (1, False)
    """
    import sqlite3

    target = os.fspath(path)
    if target != ":memory:":
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)  # os, not pathlib: model stays light
    conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None, timeout=timeout)
    try:
        if wal:
            conn.execute("PRAGMA journal_mode=WAL")
        if synchronous is not None:
            conn.execute(f"PRAGMA synchronous={synchronous}")
        if schema:
            conn.executescript(schema)
    except BaseException:
        conn.close()  # a damaged file fails here: no connection left open behind the error
        raise
    return conn
