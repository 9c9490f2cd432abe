"""The SQLite file of the store: schema, WAL records, chunk compaction, chunk reads.

Layout (schema 4):

* ``series(id, labels, name)``: each label set once, as canonical JSON;
* ``wal_series(seq, ids, labels, names, sizes, codes)``: the series an ``append``
  created, one row per append however many series it brings: their ids as a raw
  array, and their label sets numbered (each distinct pair's text once, a number
  per pair: see :mod:`inferwatch.store._new_series` for this form and the two
  older ones it still reads). A row each in ``series`` would cost three B-tree
  inserts per series; committed with the samples, moved into ``series`` by
  compaction (as Prometheus logs new series in its WAL and indexes them when it
  cuts a block). Schema 1-3 files are upgraded on open;
* ``wal(seq, t_min, sids, t, v)``: one record per ``append`` call, the batch's
  series ids, times and values as raw little-endian arrays; committed before
  ``append`` returns, so it is what makes a write durable;
* ``chunks(series_id, t_min, t_max, n, t, v)``: ``WITHOUT ROWID``, keyed by
  ``(series_id, t_min)``; compaction moves the WAL into one chunk per series
  (like Prometheus cutting its head into blocks), so a series' time range is
  one index range and a scrape costs one row, not one row per sample.

Values are raw float64 bits, so the staleness marker survives (SQLite itself
would turn NaN into NULL).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from inferwatch._exceptions import StoreError
from inferwatch.model import Labels, open_sqlite
from inferwatch.store._new_series import NewSeries, logged_sets, to_json

__all__ = [
    "PAGE_CACHE_KIB", "SCHEMA_VERSION", "compact", "connect", "delete_before", "last_sample", "load_series",
    "read_chunks", "write",
]

SCHEMA_VERSION = 4
_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    id INTEGER PRIMARY KEY,
    labels TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS series_by_name ON series (name);
CREATE TABLE IF NOT EXISTS wal_series (
    seq INTEGER PRIMARY KEY,
    ids BLOB NOT NULL,
    labels TEXT NOT NULL,
    names TEXT NOT NULL,
    sizes BLOB,
    codes BLOB
);
CREATE TABLE IF NOT EXISTS wal (
    seq INTEGER PRIMARY KEY,
    t_min REAL NOT NULL,
    sids BLOB NOT NULL,
    t BLOB NOT NULL,
    v BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    series_id INTEGER NOT NULL,
    t_min REAL NOT NULL,
    t_max REAL NOT NULL,
    n INTEGER NOT NULL,
    t BLOB NOT NULL,
    v BLOB NOT NULL,
    PRIMARY KEY (series_id, t_min)
) WITHOUT ROWID;
"""
_IN_CHUNK = 500
# SQLite's page cache, per connection. The head already holds the recent samples in memory, so
# the cache only serves compaction and reads older than the head, which the OS's file cache
# answers nearly as fast. It fills to its cap as the file grows (64 MiB took the server's RSS
# up 2.2 MiB a minute for half an hour in the soak), so the cap is kept small.
PAGE_CACHE_KIB = 8192
_F8, _I8 = np.dtype("<f8"), np.dtype("<i8")
_LOGGED = "seq, ids, labels, names, sizes, codes"  # a wal_series row as logged_sets reads it (after seq)


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back if a transaction is open: on a full disk SQLite has already rolled it back,
    and a second ROLLBACK would replace the real error with "no transaction is active"."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def reason(exc: Exception) -> str:
    """SQLite's error in words; a full disk (or a full database file) says "disk full".

    >>> reason(sqlite3.OperationalError("database or disk is full"))
    'disk full (database or disk is full)'
    """
    full = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "disk is full" in str(exc)
    return f"disk full ({exc})" if full else str(exc)


def connect(path: Path, *, autocheckpoint: bool = True) -> sqlite3.Connection:
    """Open (creating) the file in WAL mode with the schema; ``StoreError`` naming it if not.

    ``autocheckpoint=False``: commits never checkpoint the WAL (someone else must: a ``Checkpointer``).
    """
    try:
        conn = open_sqlite(path, wal=False, synchronous=None, timeout=10.0)  # WAL once the schema is known
    except (sqlite3.Error, OSError) as exc:
        raise StoreError(f"cannot open the store {path}: {exc}") from exc
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise StoreError(f"{path}: store schema {version} is newer than this inferwatch's")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA busy_timeout=10000")
        conn.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
        if not autocheckpoint:
            conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.executescript(_SCHEMA)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(wal_series)")}
        if "sizes" not in columns:
            conn.execute("ALTER TABLE wal_series ADD COLUMN sizes BLOB")  # schema 2: its rows stay JSON
        if "codes" not in columns:
            conn.execute("ALTER TABLE wal_series ADD COLUMN codes BLOB")  # schema 3: its rows stay packed
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    except (sqlite3.Error, StoreError) as exc:
        conn.close()
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"cannot open the store {path}: {exc}") from exc
    return conn


def load_series(conn: sqlite3.Connection) -> Iterator[tuple[int, Labels]]:
    """Every stored series id and label set."""
    for sid, text in conn.execute("SELECT id, labels FROM series"):
        yield sid, Labels(tuple(p) for p in json.loads(text))


def last_sample(conn: sqlite3.Connection, sid: int) -> tuple[float, float] | None:
    """The newest compacted sample of a series."""
    row = conn.execute(
        "SELECT t, v FROM chunks WHERE series_id = ? ORDER BY t_min DESC LIMIT 1", (sid,)
    ).fetchone()
    if row is None:
        return None
    return float(np.frombuffer(row[0], _F8)[-1]), float(np.frombuffer(row[1], _F8)[-1])


def write(
    conn: sqlite3.Connection, new: NewSeries | None, sids: np.ndarray, t: np.ndarray, v: np.ndarray,
    record_size: int,
) -> None:
    """Commit the new series ``new`` and one WAL record per ``record_size`` samples, in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if new is not None and len(new):
            conn.execute("INSERT INTO wal_series (ids, labels, names, sizes, codes) VALUES (?, ?, ?, ?, ?)",
                         new.logged())
        for i in range(0, int(sids.shape[0]), record_size):
            part = slice(i, i + record_size)
            conn.execute(
                "INSERT INTO wal (t_min, sids, t, v) VALUES (?, ?, ?, ?)",
                (float(t[part].min()), sids[part].astype(_I8).tobytes(),
                 t[part].astype(_F8).tobytes(), v[part].astype(_F8).tobytes()),
            )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def _labels_json(label_sets: list[tuple[tuple[str, str], ...]]) -> list[str]:
    """The canonical JSON of each label set (``[["name","value"],...]``), encoded in one call.

    >>> _labels_json([(("__name__", "up"),), (("__name__", "a"), ("x", "]],[["))])
    ['[["__name__","up"]]', '[["__name__","a"],["x","]],[["]]']
    """
    if not label_sets or not all(label_sets):
        return [to_json(items) for items in label_sets]
    return _split_sets(to_json(label_sets), len(label_sets)) or [to_json(items) for items in label_sets]


def _split_sets(text: str, count: int) -> list[str] | None:
    """The JSON of each of ``count`` non-empty label sets in ``text``, the JSON of their list.

    Cut at the ``]],[[`` between label sets: the same text as one ``encode`` per set at a
    fraction of the cost; ``None`` when a label itself holds ``]],[[`` (the cuts do not match
    the count).
    """
    parts = text[3:-3].split("]],[[")
    if len(parts) != count:
        return None
    return ["[[" + p + "]]" for p in parts]


def _logged_series(conn: sqlite3.Connection) -> tuple[int, list[tuple[int, str, str]]]:
    """The last ``wal_series`` seq and the ``series`` rows its entries become."""
    logged = conn.execute(f"SELECT {_LOGGED} FROM wal_series ORDER BY seq").fetchall()
    rows: list[tuple[int, str, str]] = []
    for _, *row in logged:
        ids, sets, names = logged_sets(*row)
        rows += zip(ids, _labels_json(sets), names, strict=True)
    return (logged[-1][0] if logged else 0), rows


def compact(conn: sqlite3.Connection) -> int:
    """Move every WAL record into per-series chunks, and logged series into ``series``, in one
    transaction; return the samples moved."""
    records = conn.execute("SELECT seq, sids, t, v FROM wal ORDER BY seq").fetchall()
    last_logged, series_rows = _logged_series(conn)
    if not records and not series_rows:
        return 0
    if not records:
        conn.execute("BEGIN IMMEDIATE")
        try:
            _move_series(conn, last_logged, series_rows)
            conn.execute("COMMIT")
        except BaseException:
            rollback(conn)
            raise
        return 0
    sids = np.concatenate([np.frombuffer(r[1], _I8) for r in records])
    t = np.concatenate([np.frombuffer(r[2], _F8) for r in records])
    v = np.concatenate([np.frombuffer(r[3], _F8) for r in records])
    order = np.lexsort((t, sids))
    sids, t, v = sids[order], t[order], v[order]
    cuts = np.flatnonzero(np.diff(sids)) + 1
    rows = [
        (int(sids[lo]), float(t[lo]), float(t[hi - 1]), hi - lo, t[lo:hi].tobytes(), v[lo:hi].tobytes())
        for lo, hi in zip(np.r_[0, cuts].tolist(), np.r_[cuts, len(sids)].tolist(), strict=True)
    ]
    conn.execute("BEGIN IMMEDIATE")
    try:
        _move_series(conn, last_logged, series_rows)
        conn.executemany("INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)", rows)
        conn.execute("DELETE FROM wal WHERE seq <= ?", (records[-1][0],))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return int(sids.shape[0])


def _move_series(conn: sqlite3.Connection, last_logged: int, rows: list[tuple[int, str, str]]) -> None:
    conn.executemany("INSERT INTO series (id, labels, name) VALUES (?, ?, ?)", rows)
    conn.execute("DELETE FROM wal_series WHERE seq <= ?", (last_logged,))


def read_chunks(
    conn: sqlite3.Connection, ids: list[int], start: float, end: float
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Per series (ascending id), the compacted samples in ``[start, end]``."""
    for i in range(0, len(ids), _IN_CHUNK):
        chunk = sorted(ids[i : i + _IN_CHUNK])
        marks = ",".join("?" * len(chunk))
        rows = conn.execute(
            f"SELECT series_id, t, v FROM chunks WHERE series_id IN ({marks}) "
            "AND t_max >= ? AND t_min <= ? ORDER BY series_id, t_min",
            (*chunk, start, end),
        ).fetchall()
        by_sid: dict[int, tuple[list[np.ndarray], list[np.ndarray]]] = {}
        for sid, tb, vb in rows:
            ts, vs = by_sid.setdefault(sid, ([], []))
            ts.append(np.frombuffer(tb, _F8))
            vs.append(np.frombuffer(vb, _F8))
        for sid, (ts, vs) in by_sid.items():
            t = np.concatenate(ts) if len(ts) > 1 else ts[0]
            v = np.concatenate(vs) if len(vs) > 1 else vs[0]
            keep = (t >= start) & (t <= end)
            if keep.any():
                yield sid, t[keep], v[keep]


def delete_before(conn: sqlite3.Connection, cutoff: float, gone: list[int]) -> int:
    """Delete compacted samples older than ``cutoff`` and the series in ``gone``; return samples deleted."""
    old = conn.execute(
        "SELECT series_id, t_min, t_max, n FROM chunks WHERE t_min < ?", (cutoff,)
    ).fetchall()
    whole = [(sid, t_min) for sid, t_min, t_max, _ in old if t_max < cutoff]
    deleted = int(sum(n for _, _, t_max, n in old if t_max < cutoff))
    rewrites = []
    for sid, t_min, t_max, _ in old:
        if t_max >= cutoff:
            tb, vb = conn.execute(
                "SELECT t, v FROM chunks WHERE series_id = ? AND t_min = ?", (sid, t_min)
            ).fetchone()
            t, v = np.frombuffer(tb, _F8), np.frombuffer(vb, _F8)
            keep = t >= cutoff
            deleted += int((~keep).sum())
            rewrites.append((sid, t_min, t[keep], v[keep]))
    # WAL records wholly older than the cutoff (still there when compaction could not run: disk full)
    stale = [(seq,) for seq, tb in conn.execute("SELECT seq, t FROM wal WHERE t_min < ?", (cutoff,))
             if np.frombuffer(tb, _F8).max(initial=-np.inf) < cutoff]
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.executemany("DELETE FROM wal WHERE seq = ?", stale)
        conn.executemany("DELETE FROM chunks WHERE series_id = ? AND t_min = ?", whole)
        for sid, t_min, t, v in rewrites:
            conn.execute("DELETE FROM chunks WHERE series_id = ? AND t_min = ?", (sid, t_min))
            conn.execute(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                (sid, float(t[0]), float(t[-1]), int(t.shape[0]), t.tobytes(), v.tobytes()),
            )
        conn.executemany("DELETE FROM series WHERE id = ?", [(sid,) for sid in gone])
        _forget_logged(conn, set(gone))
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise
    return deleted


def _forget_logged(conn: sqlite3.Connection, gone: set[int]) -> None:
    """Drop ``gone`` series from ``wal_series`` (there only while compaction cannot run: a full disk)."""
    if not gone:
        return
    logged = conn.execute(f"SELECT {_LOGGED} FROM wal_series").fetchall()
    for seq, *row in logged:
        ids, sets, names = logged_sets(*row)
        kept = [sid not in gone for sid in ids]
        if all(kept):
            continue
        conn.execute("DELETE FROM wal_series WHERE seq = ?", (seq,))
        if any(kept):  # the rest in the JSON form: rare, and it holds any label
            rest = np.array([i for i, k in zip(ids, kept, strict=True) if k], dtype=_I8)
            conn.execute("INSERT INTO wal_series (seq, ids, labels, names) VALUES (?, ?, ?, ?)",
                         (seq, rest.tobytes(),
                          to_json([x for x, k in zip(sets, kept, strict=True) if k]),
                          to_json([x for x, k in zip(names, kept, strict=True) if k])))
