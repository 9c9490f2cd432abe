"""The remote-write queue: a write-ahead log in ``<data_dir>/remote_write.sqlite`` with a cursor per remote.

Appending is cheap and local: one ``INSERT`` of a record (the batch's series
references, times and values as packed arrays; a series' labels written once,
the first time it is seen) with ``synchronous=OFF`` — no fsync and no network
on the ingest path, and a ``kill -9`` loses nothing already appended (the OS
has it). Only samples the store's append rules accept are logged: per series,
time must go forward, as the store (and Prometheus's receiver) require.

Each remote reads from its own cursor ``(record, offset)`` and moves it only
after the receiver said 2xx (:meth:`RemoteWAL.commit`). Before a send, the
end of the batch in flight is written down, so after a restart the first
batch re-sent is exactly the one that may have been received already
(at-least-once: a receiver that already has it finds the same series,
timestamps and values, which Prometheus and VictoriaMetrics treat as
duplicates). Records every cursor has passed are deleted; a remote whose
backlog grows beyond its bounds (samples or age) skips its oldest records,
counted as dropped.

>>> import tempfile, pathlib
>>> from inferwatch.model import Labels, SimulatedClock
>>> wal = RemoteWAL(pathlib.Path(tempfile.mkdtemp()) / "rw.sqlite", ["r1"], clock=SimulatedClock(100))
>>> wal.append_columns([Labels.of("up", job="a")] * 2, [10.0, 10.0], [1.0, 2.0])  # 2nd: a duplicate
>>> chunk = wal.read("r1", 100); len(chunk), chunk.samples()[0].v
(1, 1.0)
>>> wal.commit("r1", chunk.end); wal.pending("r1")
0
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from inferwatch._exceptions import StoreError
from inferwatch.model import Clock, Labels, Sample, open_sqlite

__all__ = ["WAL_FILE", "Chunk", "Position", "RemoteWAL"]

WAL_FILE = "remote_write.sqlite"

Position = tuple[int, int]  # (record id, samples of that record already done)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (ref INTEGER PRIMARY KEY, labels TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS records (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL, n INTEGER NOT NULL,
    refs BLOB NOT NULL, ts BLOB NOT NULL, vs BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS cursors (
    name TEXT PRIMARY KEY, rec INTEGER NOT NULL, off INTEGER NOT NULL,
    flight_rec INTEGER NOT NULL, flight_off INTEGER NOT NULL);
"""


@dataclass(frozen=True)
class Chunk:
    """A contiguous run of logged samples, from a cursor to ``end``."""

    labels: list[Labels]
    t: np.ndarray
    v: np.ndarray
    end: Position
    oldest_at: float  # when its first record was appended

    def __len__(self) -> int:
        return int(self.t.shape[0])

    def samples(self) -> list[Sample]:
        """The chunk as samples (what the remote-write encoder takes)."""
        return [Sample(ls, t, v)
                for ls, t, v in zip(self.labels, self.t.tolist(), self.v.tolist(), strict=True)]


class RemoteWAL:
    """The log and the cursors of ``remotes`` (cursors of remotes no longer configured are removed)."""

    def __init__(self, path: Path, remotes: Sequence[str], *, clock: Clock) -> None:
        self.path, self.clock = path, clock
        try:
            self._w = self._connect()
            self._r = self._connect()
            self._w.executescript(_SCHEMA)
        except sqlite3.Error as exc:
            raise StoreError(f"remote-write queue {path}: {exc}") from exc
        self._wlock, self._rlock = threading.Lock(), threading.Lock()
        self._refs: dict[Labels, int] = {}
        self._labels: dict[int, Labels] = {}
        for ref, text in self._w.execute("SELECT ref, labels FROM series"):
            ls = Labels(tuple(p) for p in json.loads(text))
            self._refs[ls], self._labels[ref] = ref, ls
        self._last = np.full(max(16, len(self._refs) * 2), -np.inf)
        self._listeners: list[threading.Event] = []
        self._start_cursors(remotes)

    def _connect(self) -> sqlite3.Connection:
        # synchronous OFF: written to the OS at once, survives kill -9, not power loss
        return open_sqlite(self.path, synchronous="OFF", timeout=30)

    def _start_cursors(self, remotes: Sequence[str]) -> None:
        head = self._next_id()
        with self._w:
            self._w.execute("BEGIN")
            names = ",".join("?" * len(remotes))
            self._w.execute(f"DELETE FROM cursors WHERE name NOT IN ({names})", tuple(remotes))
            for name in remotes:  # a new remote starts at the end of the log
                self._w.execute("INSERT OR IGNORE INTO cursors VALUES (?, ?, 0, ?, 0)", (name, head, head))
        self._trim()

    def _next_id(self) -> int:
        row = self._w.execute("SELECT seq FROM sqlite_sequence WHERE name = 'records'").fetchone()
        return int(row[0]) + 1 if row else 1

    def listen(self, event: threading.Event) -> None:
        """Set ``event`` after every append (a sender waits on it)."""
        self._listeners.append(event)

    # -- the ingest path -------------------------------------------------------
    def append_samples(self, samples: Iterable[Sample]) -> None:
        """Log the samples the store's rules accept (see :meth:`append_columns`)."""
        batch = list(samples)
        self.append_columns([s.labels for s in batch], [s.t for s in batch], [s.v for s in batch])

    def append_columns(self, labels: Sequence[Labels], t: Sequence[float] | np.ndarray,
                       v: Sequence[float] | np.ndarray) -> None:
        """Log one batch: samples not newer than their series' last logged one are left out."""
        if not len(labels):
            return
        t_a, v_a = np.asarray(t, dtype=np.float64), np.asarray(v, dtype=np.float64)
        with self._wlock:
            added: list[Labels] = []
            self._w.execute("BEGIN")
            try:
                refs = self._refs_of(labels, added)
                keep = self._newer(refs, t_a)
                if keep.any():
                    refs, t_a, v_a = refs[keep], t_a[keep], v_a[keep]
                    self._w.execute("INSERT INTO records (at, n, refs, ts, vs) VALUES (?, ?, ?, ?, ?)",
                                    (self.clock.now(), int(refs.shape[0]), refs.tobytes(), t_a.tobytes(),
                                     v_a.tobytes()))
                self._w.execute("COMMIT")
            except BaseException:
                if self._w.in_transaction:  # SQLite has rolled back itself on some errors (disk full)
                    self._w.execute("ROLLBACK")
                for ls in added:  # their rows were rolled back: forget them, so no record names them
                    self._labels.pop(self._refs.pop(ls), None)
                raise
            if keep.any():
                np.maximum.at(self._last, refs, t_a)  # only once committed
        for event in self._listeners:
            event.set()

    def _refs_of(self, labels: Sequence[Labels], added: list[Labels]) -> np.ndarray:
        refs = np.fromiter(map(self._refs.get, labels, [-1] * len(labels)), dtype=np.int64, count=len(labels))
        for k in np.flatnonzero(refs < 0).tolist():
            ls = labels[k]
            ref = self._refs.get(ls)
            if ref is None:
                ref = len(self._labels)
                self._w.execute("INSERT INTO series VALUES (?, ?)", (ref, json.dumps(ls.items_tuple)))
                self._refs[ls], self._labels[ref] = ref, ls
                added.append(ls)
            refs[k] = ref
        if int(refs.max()) >= self._last.shape[0]:
            grown = np.full(max(int(refs.max()) + 1, self._last.shape[0] * 2), -np.inf)
            grown[: self._last.shape[0]] = self._last
            self._last = grown
        return refs

    def _newer(self, refs: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Which samples are newer than their series' last logged one (and than the batch's earlier ones)."""
        if np.unique(refs).shape[0] == refs.shape[0]:
            return np.asarray(t > self._last[refs])
        keep = np.zeros(refs.shape[0], dtype=bool)
        last: dict[int, float] = {}
        for k, (ref, tt) in enumerate(zip(refs.tolist(), t.tolist(), strict=True)):
            if tt > last.get(ref, self._last[ref]):
                last[ref], keep[k] = tt, True
        return keep

    # -- the senders' side ---------------------------------------------------------
    def cursor(self, name: str) -> tuple[Position, Position]:
        """``name``'s committed position and the end of its batch in flight (equal when none is)."""
        with self._rlock:
            row = self._r.execute("SELECT rec, off, flight_rec, flight_off FROM cursors WHERE name = ?",
                                  (name,)).fetchone()
        if row is None:
            raise KeyError(name)
        return (row[0], row[1]), (row[2], row[3])

    def read(self, name: str, max_samples: int) -> Chunk | None:
        """Up to ``max_samples`` samples from ``name``'s cursor (only the batch in flight, if one is)."""
        start, flight = self.cursor(name)
        stop = flight if flight > start else None
        labels: list[Labels] = []
        ts: list[np.ndarray] = []
        vs: list[np.ndarray] = []
        n, end, oldest = 0, start, None
        with self._rlock:
            rows = self._r.execute("SELECT id, at, refs, ts, vs FROM records WHERE id >= ? ORDER BY id",
                                   (start[0],))
            for rec, at, refs_b, ts_b, vs_b in rows:
                off = start[1] if rec == start[0] else 0
                upto = len(ts_b) // 8
                if stop is not None and rec >= stop[0]:
                    upto = min(upto, stop[1]) if rec == stop[0] else off
                take = min(upto - off, max_samples - n)
                if take > 0:
                    refs = np.frombuffer(refs_b, dtype=np.int64)[off:off + take]
                    labels += [self._labels[r] for r in refs.tolist()]
                    ts.append(np.frombuffer(ts_b, dtype=np.float64)[off:off + take])
                    vs.append(np.frombuffer(vs_b, dtype=np.float64)[off:off + take])
                    n, oldest = n + take, at if oldest is None else oldest
                end = (rec, off + take) if off + take < len(ts_b) // 8 else (rec + 1, 0)
                if n >= max_samples or (stop is not None and end >= stop):
                    break
            rows.close()
        if not n:
            return None
        return Chunk(labels, np.concatenate(ts), np.concatenate(vs), end, float(oldest or 0.0))

    def begin(self, name: str, end: Position) -> None:
        """Write down that the batch up to ``end`` is being sent (re-sent first after a restart)."""
        self._set(name, "flight_rec = ?, flight_off = ?", end)

    def commit(self, name: str, end: Position) -> None:
        """The receiver has everything before ``end``: move the cursor there, delete what all have."""
        self._set(name, "rec = ?, off = ?, flight_rec = ?, flight_off = ?", end + end)
        self._trim()

    def _set(self, name: str, assignments: str, values: tuple[int, ...]) -> None:
        with self._rlock:
            self._r.execute(f"UPDATE cursors SET {assignments} WHERE name = ?", (*values, name))

    def _trim(self) -> None:
        with self._rlock:
            self._r.execute("DELETE FROM records WHERE id < (SELECT MIN(rec) FROM cursors)")

    def pending(self, name: str) -> int:
        """Samples logged and not yet acknowledged by ``name``'s receiver."""
        (rec, off), _ = self.cursor(name)
        with self._rlock:
            total = self._r.execute("SELECT COALESCE(SUM(n), 0) FROM records WHERE id >= ?",
                                    (rec,)).fetchone()
            first = self._r.execute("SELECT n FROM records WHERE id = ?", (rec,)).fetchone()
        return int(total[0]) - (min(off, int(first[0])) if first else 0)

    def enforce(self, name: str, max_samples: int, max_age: float) -> int:
        """Skip ``name``'s oldest records beyond its bounds (never a batch in flight); return how many."""
        (rec, off), flight = self.cursor(name)
        if flight > (rec, off):
            return 0
        cutoff = self.clock.now() - max_age
        pending = self.pending(name)
        dropped, new = 0, (rec, off)
        with self._rlock:
            rows = self._r.execute("SELECT id, at, n FROM records WHERE id >= ? ORDER BY id",
                                   (rec,)).fetchall()
        for rid, at, n in rows:
            if at >= cutoff and pending - dropped <= max_samples:
                break
            left = n - (off if rid == rec else 0)
            dropped, new = dropped + left, (rid + 1, 0)
        if dropped:
            self.commit(name, new)
        return dropped

    def close(self) -> None:
        """Close both connections."""
        with self._wlock, self._rlock:
            self._w.close()
            self._r.close()
