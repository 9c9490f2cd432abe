"""Delayed labels (outcomes) the server keeps for the SDK's pollers, in ``data_dir/outcomes.sqlite``.

Each outcome gets the next number of a sequence that never goes back (SQLite's
``AUTOINCREMENT``: a number is never reused, even after the newest rows are
deleted), so a poller's cursor ``after=SEQ`` sees every outcome exactly once.
The table is bounded twice: outcomes received more than ``retention`` seconds
ago are deleted, and beyond ``max_rows`` the oldest go first; both are counted
(``dropped``: ``age``, ``rows``).

>>> from inferwatch.config import OutcomesConfig
>>> from inferwatch.model import SimulatedClock
>>> store = OutcomeStore(None, SimulatedClock(1e9), OutcomesConfig(max_rows=2))
>>> store.add([Outcome("r1", 1), Outcome("r2", 0), Outcome("r3", "cat", model="m")])
(1, 3)
>>> [(o.seq, o.request_id, o.label) for o in store.after(0, 10).outcomes], store.dropped["rows"]
([(2, 'r2', 0), (3, 'r3', 'cat')], 1)
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inferwatch._exceptions import StoreError
from inferwatch.alerting.ha import SharedOutcomes
from inferwatch.config import OutcomesConfig
from inferwatch.model import Clock, open_sqlite, readable

__all__ = ["OUTCOMES_FILE", "Label", "Outcome", "OutcomePage", "OutcomeStore"]

OUTCOMES_FILE = "outcomes.sqlite"
Label = int | float | str | bool

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outcomes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, request_id TEXT NOT NULL, label TEXT NOT NULL,
    model TEXT NOT NULL, time REAL, received REAL NOT NULL);
CREATE INDEX IF NOT EXISTS outcomes_received ON outcomes (received);
CREATE INDEX IF NOT EXISTS outcomes_id ON outcomes (request_id, model);
CREATE TABLE IF NOT EXISTS outcomes_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class Outcome:
    """One delayed label: the true value for the prediction of ``request_id`` (``time``: when known)."""

    request_id: str
    label: Label
    model: str = ""
    time: float | None = None
    seq: int = 0
    """Its number in the server's sequence (0 until stored)."""
    received: float = 0.0
    """When the server took it (its clock)."""

    def to_json(self) -> dict[str, object]:
        """The outcome as ``GET /api/v1/outcomes`` returns it."""
        return {"seq": self.seq, "request_id": self.request_id, "label": self.label, "model": self.model,
                "time": self.time if self.time is not None else self.received, "received": self.received}


@dataclass(frozen=True)
class OutcomePage:
    """Outcomes after a cursor, in sequence order; ``next`` is the cursor to ask with next time."""

    outcomes: list[Outcome]
    next: int
    last: int
    """The newest number given out so far (``next == last``: the poller has caught up)."""
    epoch: str = ""
    """The sequence's name: another one means it started again (a cursor from before is void)."""


class OutcomeStore:
    """The bounded outcome table (``path`` None: in memory, as with ``storage.type: memory``).

    ``shared``: an HA pair's table in PostgreSQL instead (posted to either replica, polled from
    either, numbered in commit order there); ``StoreError`` (a 503) while that database is gone.
    """

    def __init__(self, path: Path | None, clock: Clock, config: OutcomesConfig,
                 shared: SharedOutcomes | None = None) -> None:
        self.path, self.clock, self.config = path, clock, config
        self.shared = shared
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self.received = 0
        """Outcomes stored since this process started."""
        self.dropped = {"age": 0, "rows": 0}
        """Outcomes deleted by retention (``age``) and by ``max_rows`` (``rows``) since the start."""
        if shared is not None:
            self.epoch, self._rows = shared.epoch, shared.kept
            return
        try:
            self._db = open_sqlite(path or ":memory:", schema=_SCHEMA)
            self._rows = int(self._db.execute("SELECT COUNT(*) FROM outcomes").fetchone()[0])
            # the table's identity: a new file (or a memory store's restart) numbers from 1 again, and a
            # poller whose cursor is below the new ``last`` could not tell that from the sequence alone
            self._db.execute("INSERT OR IGNORE INTO outcomes_meta VALUES ('epoch', ?)", (uuid.uuid4().hex,))
            self.epoch = str(self._db.execute("SELECT value FROM outcomes_meta WHERE key = 'epoch'"
                                              ).fetchone()[0])
            """Names this table's sequence; it changes only when the sequence starts again."""
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"outcome store {path}: cannot open ({exc})") from exc

    @property
    def rows(self) -> int:
        """Outcomes kept now."""
        return self._rows

    def add(self, outcomes: list[Outcome]) -> tuple[int, int]:
        """Store ``outcomes`` (all or none); return the first and last sequence numbers given.

        An outcome whose (request id, model) is stored already, or came earlier in the same batch,
        is stored once: a sender's retry adds nothing (``last - first + 1`` were new).
        """
        now = self.clock.now()
        first_of = {(o.request_id, o.model): o for o in reversed(outcomes)}  # the batch's first of each id
        rows = [(o.request_id, json.dumps(o.label), o.model, o.time, now, o.request_id, o.model)
                for o in outcomes if first_of[(o.request_id, o.model)] is o]
        if self.shared is not None:
            added, last, old, over = self.shared.add([r[:4] for r in rows], now, self.config.retention,
                                                     self.config.max_rows)
            with self._lock:
                self.received += added
                self._count(0, old, over)
                self._rows = self.shared.kept
            return last - added + 1, last
        with self._lock:
            try:
                self._file().execute("BEGIN")  # one transaction: a failed write stores nothing
                try:
                    before = self._file().total_changes
                    self._file().executemany(
                        "INSERT INTO outcomes (request_id, label, model, time, received) "
                        "SELECT ?, ?, ?, ?, ? WHERE NOT EXISTS "
                        "(SELECT 1 FROM outcomes WHERE request_id = ? AND model = ?)", rows)
                    added = self._file().total_changes - before
                    last = self._last()
                    # bounded in the same transaction: a failed delete must not leave the rows stored
                    # behind a 503 (the sender retries, and every outcome would be there twice)
                    old, over = self._delete_old(now, self._rows + added)
                    self._file().execute("COMMIT")
                except BaseException:
                    self._file().execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                raise StoreError(f"outcome store {self.path}: cannot write ({exc})") from exc
            self.received += added
            self._count(added, old, over)
        return last - added + 1, last

    def after(self, seq: int, limit: int, model: str | None = None) -> OutcomePage:
        """Up to ``limit`` outcomes numbered above ``seq`` (of ``model`` and of no model, when given)."""
        where = "seq > ?"
        args: list[object] = [seq]
        if model is not None:
            where += " AND (model = ? OR model = '')"
            args.append(model)
        if self.shared is not None:
            got, last, old = self.shared.after(seq, limit, model, self.clock.now(), self.config.retention)
            with self._lock:
                self._count(0, old, 0)
                self._rows = self.shared.kept
        else:
            got, last = self._after(where, args, limit)
        out = [Outcome(r, readable(json.loads(lb)), m, t, int(s), float(at)) for s, r, lb, m, t, at in got]
        # a short page read everything up to ``last``: rows of other models after the page are skipped too
        nxt = out[-1].seq if len(out) == limit else max(last, seq)
        return OutcomePage(out, nxt, last, self.epoch)

    def _file(self) -> sqlite3.Connection:
        assert self._db is not None, "an HA pair's outcomes are in its database"
        return self._db

    def _after(self, where: str, args: list[object], limit: int) -> tuple[list[Any], int]:
        with self._lock:
            self._prune(self.clock.now())
            try:
                got = self._file().execute(f"SELECT seq, request_id, label, model, time, received FROM "
                                           f"outcomes WHERE {where} ORDER BY seq LIMIT ?",
                                           (*args, limit)).fetchall()
                last = self._last()
            except sqlite3.Error as exc:
                raise StoreError(f"outcome store {self.path}: cannot read ({exc})") from exc
        return got, last

    def _last(self) -> int:
        row = self._file().execute("SELECT seq FROM sqlite_sequence WHERE name = 'outcomes'").fetchone()
        return int(row[0]) if row else 0

    def _prune(self, now: float) -> None:
        try:
            old, over = self._delete_old(now, self._rows)
        except sqlite3.Error as exc:
            raise StoreError(f"outcome store {self.path}: cannot delete old outcomes ({exc})") from exc
        self._count(0, old, over)

    def _delete_old(self, now: float, rows: int) -> tuple[int, int]:
        """Delete past retention, then the oldest beyond ``max_rows`` of ``rows``; return both counts."""
        old = int(self._file().execute("DELETE FROM outcomes WHERE received < ?",
                                   (now - self.config.retention,)).rowcount)
        over = max(0, rows - old - self.config.max_rows)
        if over:
            self._file().execute("DELETE FROM outcomes WHERE seq IN (SELECT seq FROM outcomes ORDER BY seq "
                             "LIMIT ?)", (over,))
        return old, over

    def _count(self, added: int, old: int, over: int) -> None:
        self._rows += added - old - over
        self.dropped["age"] += old
        self.dropped["rows"] += over

    def close(self) -> None:
        """Close the file (or the pair's connection)."""
        with self._lock:
            if self.shared is not None:
                self.shared.close()
            if self._db is not None:
                self._db.close()
