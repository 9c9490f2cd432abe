"""Batch ids already stored, series definitions and device statistics of edge ingest, in SQLite."""

from __future__ import annotations

import contextlib
import json
import logging
import math
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from inferwatch._exceptions import StoreError
from inferwatch.model import Labels, open_sqlite

__all__ = ["SeenBatches"]

log = logging.getLogger(__name__)


class SeenBatches:
    """Batch ids already stored, per device, in SQLite (``:memory:`` for an in-memory server)."""

    def __init__(self, path: Path | None) -> None:
        self._lock = threading.Lock()
        try:
            # NORMAL, as the store: WAL survives a crash of the process; power loss may forget the last
            # ids (a batch sent again is then stored again) or definitions (the agent resends them on 409)
            self._db = open_sqlite(path or ":memory:", synchronous="NORMAL")
            self._db.execute("CREATE TABLE IF NOT EXISTS batches (device TEXT NOT NULL, id TEXT NOT NULL, "
                             "at REAL NOT NULL, PRIMARY KEY (device, id))")
            self._db.execute("CREATE INDEX IF NOT EXISTS batches_at ON batches (at)")
            self._db.execute("CREATE TABLE IF NOT EXISTS series (device TEXT NOT NULL, spool TEXT NOT NULL, "
                             "id INTEGER NOT NULL, labels TEXT NOT NULL, PRIMARY KEY (device, spool, id))")
            self._db.execute("CREATE TABLE IF NOT EXISTS devices (device TEXT PRIMARY KEY, "
                             "status TEXT NOT NULL)")
            # the batch-id check reads on a connection of its own: a group's commit never holds it up
            self._read = open_sqlite(path, synchronous="NORMAL") if path else self._db
        except sqlite3.Error as exc:
            raise StoreError(f"edge state {path}: cannot open ({exc})") from exc
        self._read_lock = threading.Lock() if path else self._lock
        self._series: dict[tuple[str, str], dict[int, Labels]] = {}  # (device, spool) -> id -> labels
        self._counters: dict[tuple[str, str], set[int]] = {}  # (device, spool) -> ids of counters (v3)
        self._pruned = -math.inf  # when ids older than their keep were last deleted

    def _spool_series(self, device: str, spool: str) -> dict[int, Labels]:
        got = self._series.get((device, spool))
        if got is None:
            rows = self._db.execute("SELECT id, labels FROM series WHERE device = ? AND spool = ?",
                                    (device, spool))
            got, counters = {}, set()
            for i, text in rows:  # version 2 stored the labels; version 3 {"l": labels, "k": kind}
                d = json.loads(text)
                got[int(i)] = Labels(d["l"] if "__name__" not in d else d)
                if d.get("k") == "c" and "__name__" not in d:
                    counters.add(int(i))
            self._series[(device, spool)], self._counters[(device, spool)] = got, counters
        return got

    def counters(self, device: str, spool: str) -> set[int]:
        """The ids of ``device``'s ``spool`` defined as counters (version 3)."""
        with self._lock:
            self._spool_series(device, spool)
            return set(self._counters[(device, spool)])

    def labels(self, device: str, spool: str, sid: int) -> Labels | None:
        """The labels series ``sid`` of ``device``'s ``spool`` was defined with (version 2), if any."""
        got = self._series.get((device, spool))  # read for every id of every batch: no lock once loaded
        if got is not None:
            return got.get(sid)
        with self._lock:
            return self._spool_series(device, spool).get(sid)

    def define(self, device: str, spool: str, defs: dict[int, Labels], kinds: dict[int, str] | None = None
               ) -> None:
        """Keep the series definitions of a version-2 or -3 batch (``kinds``: version 3's)."""
        with self._lock:
            known = self._spool_series(device, spool)
            counters = self._counters[(device, spool)]
            new = {i: ls for i, ls in defs.items()
                   if known.get(i) != ls or (kinds is not None and (kinds.get(i) == "c") != (i in counters))}
            if new:
                rows = []
                for i, ls in new.items():
                    d: Any = ls.to_dict() if kinds is None else {"l": ls.to_dict(), "k": kinds.get(i, "g")}
                    rows.append((device, spool, i, json.dumps(d)))
                    if kinds is not None and kinds.get(i) == "c":
                        counters.add(i)
                    else:
                        counters.discard(i)
                with self._transaction():  # one transaction for a batch's definitions
                    self._db.executemany("INSERT OR REPLACE INTO series VALUES (?, ?, ?, ?)", rows)
                known.update(new)

    def seen(self, device: str, batch_id: str) -> bool:
        """Whether ``batch_id`` of ``device`` was stored already."""
        with self._read_lock:
            row = self._read.execute("SELECT 1 FROM batches WHERE device = ? AND id = ?", (device, batch_id))
            return row.fetchone() is not None

    def add_many(self, ids: list[tuple[str, str]], now: float, keep: float,
                 statuses: list[dict[str, Any]]) -> None:
        """Record the batch ids of a group of uploads as stored and their devices' statistics, in one
        transaction (a group commit's); forget ids older than ``keep`` seconds (at most once a minute:
        a fleet sends hundreds a second)."""
        with self._lock, self._transaction():
            self._db.executemany("INSERT OR IGNORE INTO batches VALUES (?, ?, ?)",
                                 [(device, batch_id, now) for device, batch_id in ids])
            self._db.executemany("INSERT OR REPLACE INTO devices VALUES (?, ?)",
                                 [(st["device"], json.dumps(st)) for st in statuses])
            if now - self._pruned >= 60.0 or now < self._pruned:
                self._db.execute("DELETE FROM batches WHERE at < ?", (now - keep,))
                self._pruned = now

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        """One transaction, committed at the end (the connection commits each statement by itself
        otherwise: a group's hundreds of rows would be hundreds of commits); rolled back on an error."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:  # the uploads of the group are answered 503: their agents send again
            raise StoreError(f"edge state: cannot write ({exc})") from exc

    def load_devices(self) -> list[dict[str, Any]]:
        """The statistics of every device saved (a row that does not read is left out, logged)."""
        out = []
        with self._lock:
            rows = self._db.execute("SELECT device, status FROM devices").fetchall()
        for device, text in rows:
            try:
                out.append(dict(json.loads(text)))
            except ValueError:
                log.warning("edge state: device %r's statistics do not read; starting it afresh", device)
        return out

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()
            if self._read is not self._db:
                self._read.close()
