"""A connection of its own to the pair's database, for the shared tables outside the alerting state.

Delayed labels and the edge device registry are written on their own paths (an outcomes
POST, the edge watch's round), never in the alerting state's transactions: each such part
holds a :class:`SharedLink`, so neither waits behind the other's statements on one
connection. Nothing is journaled here: while the database is gone a statement raises
``StoreError`` naming the URL without its password (an outcomes POST answers 503 and its
sender retries; the device registry keeps what it knows and tries again next round).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from inferwatch._exceptions import StoreError
from inferwatch.alerting.ha._pg import CONNECT_TIMEOUT_S, STATEMENT_TIMEOUT_MS, db_cause, load_psycopg
from inferwatch.settings import Secret, redact_url

if TYPE_CHECKING:
    import psycopg

__all__ = ["SharedLink"]


class SharedLink:
    """One connection to ``url`` (opened on first use, and again after it broke), used under a lock."""

    def __init__(self, url: Secret) -> None:
        self._url, self.path = url, redact_url(url.reveal())
        self.pg = load_psycopg()
        self._conn: psycopg.Connection[Any] | None = None
        self._lock = threading.Lock()

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed or self._conn.broken:
            self._conn = self.pg.connect(self._url.reveal(), autocommit=True,
                                         connect_timeout=CONNECT_TIMEOUT_S,
                                         options=f"-c statement_timeout={STATEMENT_TIMEOUT_MS}")
        return self._conn

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection inside one transaction (committed on exit, rolled back on an error);
        ``StoreError`` naming the database and the cause when it fails or cannot be reached."""
        with self._lock:
            try:
                conn = self._connection()
                with conn.transaction():
                    yield conn
            except self.pg.Error as exc:
                raise StoreError(f"ha: database {self.path}: {db_cause(exc)}") from None

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
