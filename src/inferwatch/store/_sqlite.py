"""The SQLite store: one file, WAL mode, batched transactions, an in-memory head.

Layout: ``series(id, labels, name)`` holds each label set once as canonical
JSON; ``samples(series_id, t, v, nan)`` is a ``WITHOUT ROWID`` table keyed by
``(series_id, t)``, so a series' samples in a time range are one index range.
SQLite has no NaN (it stores NULL), so NaN values are stored as ``v = NULL``
with ``nan`` saying which NaN: 1 for the staleness marker, 0 for any other.

Every ``append`` call is one transaction (split in chunks of ``batch_size``
rows), committed before it returns: a kill -9 loses at most the call in
flight, and WAL keeps the file consistent. Recent samples (``head_window``,
one hour by default) are also kept in memory, like Prometheus's head block,
so rule evaluation never reads the disk.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from inferwatch._exceptions import StoreError
from inferwatch.model import STALE_NAN, Clock, Labels, Matcher, Sample, SystemClock, is_stale_nan
from inferwatch.store._head import ACCEPTED, DUPLICATE, OUT_OF_ORDER, Head, classify
from inferwatch.store._index import SeriesIndex
from inferwatch.store._memory import validate_batch
from inferwatch.store._protocol import AppendStats, Series

__all__ = ["SQLiteStore"]

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    labels TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS series_by_name ON series (name);
CREATE TABLE IF NOT EXISTS samples (
    series_id INTEGER NOT NULL,
    t REAL NOT NULL,
    v REAL,
    nan INTEGER,
    PRIMARY KEY (series_id, t)
) WITHOUT ROWID;
"""
_IN_CHUNK = 500
_Row = tuple[int, float, float | None, int | None]


def _row(sid: int, t: float, v: float) -> _Row:
    if v == v:
        return (sid, t, v, None)
    return (sid, t, None, 1 if is_stale_nan(v) else 0)


class SQLiteStore:
    """A :class:`~inferwatch.store.Store` in one SQLite file; survives restarts and kill -9.

    >>> import tempfile, pathlib
    >>> from inferwatch.model import Labels, Sample, SimulatedClock
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tsdb.sqlite"
    >>> st = SQLiteStore(path, clock=SimulatedClock(100.0))
    >>> st.append([Sample(Labels.of("up", job="a"), 100.0, 1.0)]); st.close()
    >>> [str(x) for x in SQLiteStore(path).series([])]
    ['up{job="a"}']
    """

    def __init__(
        self,
        path: str | Path,
        *,
        batch_size: int = 50_000,
        clock: Clock | None = None,
        retention: float | None = None,
        head_window: float = 3600.0,
    ) -> None:
        if batch_size < 1 or head_window < 0:
            raise ValueError("batch_size must be >= 1 and head_window >= 0")
        self.path = Path(path)
        self.batch_size = batch_size
        self.retention = retention
        self.head_window = float(head_window)
        self.stats = AppendStats()
        self._clock: Clock = clock or SystemClock()
        self._lock = threading.RLock()
        self._index = SeriesIndex()
        self._head = Head()
        self._next_id = 1
        self._head_from = self._clock.now() - self.head_window
        self._conn: sqlite3.Connection | None = self._connect()
        try:
            self._load()
        except sqlite3.Error as exc:
            self._conn.close()
            raise StoreError(f"cannot read the store {self.path}: {exc}") from exc

    # -- opening ----------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                conn.close()
                raise StoreError(
                    f"{self.path}: store schema {version} is newer than this inferwatch ({SCHEMA_VERSION})"
                )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
            conn.execute("PRAGMA cache_size=-65536")
            conn.executescript(_SCHEMA)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the store {self.path}: {exc}") from exc
        return conn

    def _load(self) -> None:
        conn = self._db()
        for sid, text in conn.execute("SELECT id, labels FROM series"):
            self._index.add(sid, Labels(tuple(p) for p in json.loads(text)))
            self._next_id = max(self._next_id, sid + 1)
        last_q = "SELECT t, v, nan FROM samples WHERE series_id = ? ORDER BY t DESC LIMIT 1"
        for sid in list(self._index.ids()):
            row = conn.execute(last_q, (sid,)).fetchone()
            if row is not None:
                self._head.last[sid] = (row[0], self._decode(row[1], row[2]))
        for sid, t, v in self._read(list(self._index.ids()), self._head_from, math.inf):
            buf_t, buf_v = t.tolist(), v.tolist()
            for tt, vv in zip(buf_t, buf_v, strict=True):
                self._head.push(sid, tt, vv)
            self._head.last[sid] = (buf_t[-1], buf_v[-1])

    @staticmethod
    def _decode(v: float | None, nan: int | None) -> float:
        if v is not None:
            return float(v)
        return STALE_NAN if nan == 1 else math.nan

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the store {self.path} is closed")
        return self._conn

    # -- writing ----------------------------------------------------------------
    def append(self, samples: Iterable[Sample]) -> None:
        """Add a batch in one transaction (see the store's append rules)."""
        with self._lock:
            conn = self._db()
            batch = validate_batch(samples, self._index)
            new_series: dict[Labels, int] = {}
            overlay: dict[int, tuple[float, float]] = {}
            rows: list[_Row] = []
            ooo = dup = 0
            index_get, head_last = self._index.get, self._head.last
            for labels, t, v in batch:
                sid = index_get(labels)
                if sid is None:
                    sid = new_series.get(labels)
                    if sid is None:
                        sid = new_series[labels] = self._next_id + len(new_series)
                prev = overlay.get(sid) or head_last.get(sid)
                verdict = classify(prev, t, v)
                if verdict == ACCEPTED:
                    overlay[sid] = (t, v)
                    rows.append(_row(sid, t, v))
                elif verdict == OUT_OF_ORDER:
                    ooo += 1
                elif verdict == DUPLICATE:
                    dup += 1
            self._write(conn, new_series, rows)
            self._apply(new_series, rows)
            self.stats.out_of_order += ooo
            self.stats.duplicate += dup
            self._maybe_truncate_head()

    def _write(self, conn: sqlite3.Connection, new_series: dict[Labels, int], rows: list[_Row]) -> None:
        if not rows and not new_series:
            return
        try:
            conn.execute("BEGIN IMMEDIATE")
            if new_series:
                conn.executemany(
                    "INSERT INTO series (id, labels, name) VALUES (?, ?, ?)",
                    [(sid, json.dumps(ls.items_tuple, separators=(",", ":")), ls.name)
                     for ls, sid in new_series.items()],
                )
            insert = "INSERT OR IGNORE INTO samples VALUES (?, ?, ?, ?)"
            for i in range(0, len(rows), self.batch_size):
                conn.executemany(insert, rows[i : i + self.batch_size])
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise StoreError(f"cannot write to the store {self.path}: {exc}") from exc

    def _apply(self, new_series: dict[Labels, int], rows: list[_Row]) -> None:
        for labels, sid in new_series.items():
            self._index.add(sid, labels)
        self._next_id += len(new_series)
        self.stats.series_created += len(new_series)
        head, head_from = self._head, self._head_from
        for sid, t, v, nan in rows:
            value = v if v is not None else (STALE_NAN if nan == 1 else math.nan)
            head.push(sid, t, value, buffer=t >= head_from)
        self.stats.appended += len(rows)

    def _maybe_truncate_head(self) -> None:
        cut = self._clock.now() - self.head_window
        if cut - self._head_from > self.head_window / 4 + 1.0:
            self._head.drop_before(cut)
            self._head_from = cut

    # -- reading ----------------------------------------------------------------
    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        """Series matching ``matchers`` with samples in ``[start, end]`` (from memory when recent)."""
        with self._lock:
            ids = self._index.match(matchers)
            self._db()
            out: list[Series] = []
            if start >= self._head_from:
                for sid in ids:
                    t, v = self._head.window(sid, start, end)
                    if t.shape[0]:
                        out.append(Series(self._index.labels(sid), t, v))
            else:
                out = [Series(self._index.labels(sid), t, v) for sid, t, v in self._read(ids, start, end)]
        out.sort(key=lambda s: s.labels)
        return out

    def _read(self, ids: list[int], start: float, end: float) -> Iterable[tuple[int, np.ndarray, np.ndarray]]:
        conn = self._db()
        for i in range(0, len(ids), _IN_CHUNK):
            chunk = ids[i : i + _IN_CHUNK]
            marks = ",".join("?" * len(chunk))
            query = (
                f"SELECT series_id, t, v, nan FROM samples WHERE series_id IN ({marks}) "
                "AND t >= ? AND t <= ? ORDER BY series_id, t"
            )
            try:
                rows = conn.execute(query, (*chunk, start, end)).fetchall()
            except (sqlite3.Error, OverflowError) as exc:
                raise StoreError(f"cannot read the store {self.path}: {exc}") from exc
            if not rows:
                continue
            arr = np.array(rows, dtype=np.float64)
            v = arr[:, 2].copy()
            v[arr[:, 3] == 1] = STALE_NAN
            sids = arr[:, 0].astype(np.int64)
            bounds = np.flatnonzero(np.diff(sids)) + 1
            t_all = arr[:, 1].copy()
            for lo, hi in zip(np.r_[0, bounds], np.r_[bounds, len(rows)], strict=True):
                yield int(sids[lo]), t_all[lo:hi], v[lo:hi]

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        """Label sets of the matching series."""
        with self._lock:
            self._db()
            return sorted(self._index.labels(sid) for sid in self._index.match(matchers))

    def label_values(self, name: str) -> list[str]:
        """Distinct values of label ``name``."""
        with self._lock:
            self._db()
            return self._index.label_values(name)

    # -- maintenance ------------------------------------------------------------
    def delete_before(self, t: float) -> int:
        """Delete samples older than ``t`` and series left empty; return the samples deleted."""
        with self._lock:
            conn = self._db()
            gone = [sid for sid, (last_t, _) in self._head.last.items() if last_t < t]
            before = conn.total_changes
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany(
                    "DELETE FROM samples WHERE series_id = ? AND t < ?",
                    [(sid, t) for sid in self._index.ids()],
                )
                deleted = conn.total_changes - before
                conn.executemany("DELETE FROM series WHERE id = ?", [(sid,) for sid in gone])
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise StoreError(f"cannot apply retention to {self.path}: {exc}") from exc
            self._head.drop_before(t)
            for sid in gone:
                self._head.forget(sid)
                self._index.remove(sid)
            return deleted

    def apply_retention(self) -> int:
        """Delete what is older than ``retention`` on the clock; return the samples deleted."""
        if self.retention is None:
            return 0
        return self.delete_before(self._clock.now() - self.retention)

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` (``"ok"`` when the file is sound)."""
        with self._lock:
            return str(self._db().execute("PRAGMA integrity_check").fetchone()[0])

    def flush(self) -> None:
        """Checkpoint the WAL into the main file (appends are already committed)."""
        with self._lock:
            try:
                self._db().execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot checkpoint the store {self.path}: {exc}") from exc

    def close(self) -> None:
        """Checkpoint and close the file; idempotent."""
        with self._lock:
            if self._conn is None:
                return
            # A failed checkpoint is harmless: the WAL is replayed on the next open.
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()
            self._conn = None
