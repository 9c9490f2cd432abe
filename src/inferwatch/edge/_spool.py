"""The durable buffer: an SQLite spool on the device, bounded by age and bytes, ordered, resumable.

Durability (the fsync policy): the spool runs in WAL mode with
``synchronous=FULL``, so every :meth:`Spool.append` and :meth:`Spool.ack` is
one transaction, fsynced before it returns. ``kill -9`` of the agent loses
nothing it appended; power loss loses nothing it appended either (the WAL is
synced at each commit). A transaction cut short leaves the spool as it was.

Order and resume: rows are numbered in append order (``seq``) and uploaded in
that order, whatever their timestamps (a clock stepping back reorders
nothing). Before a batch is sent its range is written down as *in flight*
with its id, so after a crash the same batch, with the same id, is sent
first: the receiver's batch-id check then drops it if it had arrived.

Compressed segments: each append is one segment, its samples as columns (series ids, times,
values XOR'd with the series' previous one) under zlib (``formats._segment``): about 3 bytes a
sample where a row a sample took 40, so the same cap holds ten times the outage. Samples are
numbered by position in their segment; a batch may end inside a segment (acknowledging it keeps
the segment's tail). A segment that fails its checksum when read is moved aside
(``spool.sqlite.damaged-<epoch>-<first>.seg``) and its samples counted as ``damaged``, the spool
going on with the next one. A spool of an older agent (a row a sample) is turned into segments
when opened, its batch in flight keeping its id.

Bounds: samples older than ``max_age`` (24 h: a segment goes when its newest sample is older)
and, when the segments' bytes exceed ``max_bytes``, the oldest segments are dropped first; each
drop is counted by reason (``age``, ``bytes``) in the spool itself, and a write the disk refuses
(full) is counted as ``disk_full`` while the agent runs on. A segment's bytes are counted as its
compressed size plus SQLite's row overhead (:data:`SEGMENT_BYTES`), so the bound does not depend
on how SQLite lays out pages.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from inferwatch._exceptions import StoreError
from inferwatch.edge._segments import SCHEMA, SEGMENT_BYTES, Damaged, Segments
from inferwatch.model import Labels, Sample, open_sqlite

__all__ = ["DROP_REASONS", "SEGMENT_BYTES", "Spool", "SpoolBatch"]

log = logging.getLogger(__name__)

DROP_REASONS = ("age", "bytes", "disk_full", "damaged")


@dataclass(frozen=True)
class SpoolBatch:
    """Rows ``first..last`` (by seq) of the spool, under a stable id."""

    batch_id: str
    first: int
    last: int
    samples: tuple[Sample, ...]
    series_ids: tuple[int, ...] = ()  # the spool's id of each sample's series (the wire's dictionary)

    @property
    def spool_id(self) -> str:
        """The spool this batch came from (its id's prefix)."""
        return self.batch_id.partition(":")[0]


class Spool:
    """An append-only queue of samples on disk; see the module docstring for its guarantees.

    >>> import tempfile, pathlib
    >>> from inferwatch.model import Labels, Sample
    >>> sp = Spool(pathlib.Path(tempfile.mkdtemp()) / "spool.sqlite")
    >>> sp.append([Sample(Labels.of("x"), 10.0, 1.0)], now=10.0)
    1
    >>> b = sp.next_batch(100); len(b.samples), sp.backlog()
    (1, 1)
    >>> sp.ack(b); sp.backlog()
    0
    >>> sp.close()
    """

    def __init__(self, path: Path, *, max_age: float = 86400.0, max_bytes: int = 256 << 20) -> None:
        if max_age <= 0 or max_bytes < SEGMENT_BYTES:
            raise ValueError(f"spool bounds must be positive (max_age={max_age}, max_bytes={max_bytes})")
        self.path, self.max_age, self.max_bytes = path, max_age, max_bytes
        self._lock = threading.Lock()
        # A new epoch at every open: rows a damaged spool lost are numbered again, and the epoch in
        # the batch id keeps those batches from being taken for the delivered ones they collide with.
        self.epoch = os.urandom(4).hex()
        lost = self._open_checked(path)
        self._seg = Segments(self._db)
        self._ids: dict[Labels, int] = {}
        self._pending: dict[str, int] = {}  # drops the full disk would not let us record yet
        self._labels: dict[int, Labels] = {}
        for sid, text in self._db.execute("SELECT id, labels FROM series"):
            ls = Labels(json.loads(text))
            self._ids[ls], self._labels[sid] = sid, ls
        self.spool_id = self._meta("spool_id") or self._init_id()
        self._migrate()
        if lost:  # reported to the server with the other drops (reason "damaged")
            self._count_drop("damaged", lost)

    def _open_checked(self, path: Path) -> int | None:
        """Open the spool; a damaged one is moved aside for a new one (returns the rows it held, if known)."""
        try:
            self._db = open_sqlite(path, synchronous="FULL")
            self._db.execute("PRAGMA cache_size=-256")  # 256 KiB: the spool is read and written in order
            self._db.executescript(SCHEMA)
            check = self._db.execute("PRAGMA quick_check").fetchone()
            if check is not None and check[0] == "ok":
                return None
            problem = str(check[0] if check else "no answer")
        except sqlite3.DatabaseError as exc:  # not a database, or a damaged one
            problem = str(exc)
        except OSError as exc:
            raise StoreError(f"edge spool {path}: cannot open ({exc})") from exc
        lost = self._count_rows()
        with contextlib.suppress(sqlite3.Error, AttributeError):
            self._db.close()
        aside = path.with_name(f"{path.name}.damaged-{self.epoch}")
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        log.warning("edge spool %s is damaged (%s): moved aside to %s, starting a new one; %s samples lost",
                    path, problem[:200], aside, "unknown" if lost is None else lost)
        try:
            self._db = open_sqlite(path, synchronous="FULL")
            self._db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"edge spool {path}: cannot open ({exc})") from exc
        return lost if lost is not None else 1  # unknown: at least the damage is reported

    def _count_rows(self) -> int | None:
        try:
            return int(self._db.execute("SELECT (SELECT count(*) FROM samples) + "
                                        "(SELECT coalesce(sum(n), 0) FROM segments)").fetchone()[0])
        except (sqlite3.Error, AttributeError):
            return None

    def _migrate(self) -> None:
        """An older agent's spool (a row a sample) becomes segments, its batch in flight keeping its id."""
        try:
            self._db.execute("BEGIN IMMEDIATE")
            inflight = self._meta("inflight")
            marked = self._seg.migrate(inflight)
            if marked != inflight:
                self._db.execute("DELETE FROM meta WHERE key = 'inflight'")
                if marked:
                    self._set("inflight", marked)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise StoreError(f"edge spool {self.path}: cannot convert an older spool ({exc})") from exc

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set(self, key: str, value: object) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, str(value)))

    def _init_id(self) -> str:
        sid = os.urandom(6).hex()
        self._db.execute("BEGIN IMMEDIATE")
        self._set("spool_id", sid)
        self._db.execute("COMMIT")
        return sid

    def _series_id(self, labels: Labels) -> int:
        sid = self._ids.get(labels)
        if sid is None:
            cur = self._db.execute("INSERT INTO series (labels) VALUES (?)",
                                   (json.dumps(labels.items_tuple, separators=(",", ":")),))
            sid = int(cur.lastrowid or 0)
            self._ids[labels], self._labels[sid] = sid, labels
        return sid

    def append(self, samples: Sequence[Sample], *, now: float) -> int:
        """Store ``samples`` durably (then apply the bounds); returns how many were stored.

        A disk that refuses the write drops this batch, counted as ``disk_full``.
        """
        if not samples:
            return 0
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._seg.add([(self._series_id(s.labels), s.t, s.v) for s in samples])
                self._db.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()
                self._count_drop("disk_full", len(samples))
                return 0
            self._enforce(now)
            return len(samples)

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._db.execute("ROLLBACK")
        self._ids = {ls: i for ls, i in self._ids.items() if self._known(i)}
        self._labels = {i: ls for ls, i in self._ids.items()}
        with contextlib.suppress(sqlite3.Error, AttributeError):
            self._seg.recount()

    def _known(self, sid: int) -> bool:
        return self._db.execute("SELECT 1 FROM series WHERE id = ?", (sid,)).fetchone() is not None

    def _count_drop(self, reason: str, n: int) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            self._set(f"dropped_{reason}", self._dropped(reason) + n + self._pending.get(reason, 0))
            self._db.execute("COMMIT")
            self._pending.pop(reason, None)  # what the full disk kept from us is on disk now
        except sqlite3.Error:  # the disk is full even for a counter: keep it until it is not
            self._rollback()
            self._pending[reason] = self._pending.get(reason, 0) + n

    def _dropped(self, reason: str) -> int:
        return int(self._meta(f"dropped_{reason}") or 0)

    def enforce(self, now: float) -> None:
        """Drop what is older than ``max_age`` or over ``max_bytes`` (oldest first), counting it."""
        with self._lock:
            self._enforce(now)

    def _enforce(self, now: float) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
            old = self._seg.drop_older(now - self.max_age)
            over = self._seg.drop_over(self.max_bytes)
            if old:
                self._set("dropped_age", self._dropped("age") + old)
            if over:
                self._set("dropped_bytes", self._dropped("bytes") + over)
            self._db.execute("COMMIT")
        except sqlite3.Error:
            self._rollback()

    def next_batch(self, max_samples: int) -> SpoolBatch | None:
        """The batch to send now: the one in flight if any (same id), else the oldest rows."""
        with self._lock:
            inflight = self._meta("inflight")
            if inflight:  # "first-last|id" (an older version wrote "first-last": its id had no epoch)
                span, _, bid = inflight.partition("|")
                first, last = (int(x) for x in span.split("-"))
                rows = self._read(first, last, last - first + 1)
                if rows:
                    return self._batch(first, last, rows, bid or f"{self.spool_id}:{first}-{last}")
            rows = self._read(0, 2**62, max_samples)
            if not rows:
                return None
            first, last = int(rows[0][0]), int(rows[-1][0])
            bid = f"{self.spool_id}:{self.epoch}.{first}-{last}"
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._set("inflight", f"{first}-{last}|{bid}")
                self._db.execute("COMMIT")
            except sqlite3.Error:
                self._rollback()
            return self._batch(first, last, rows, bid)

    def _read(self, first: int, last: int, limit: int) -> list[tuple[int, int, float, float]]:
        """Rows ``first..last`` (up to ``limit``); damaged segments on the way are moved aside, counted."""
        while True:
            rows, damaged = self._seg.read(first, last, limit)
            if not damaged:
                return rows
            self._set_aside(damaged)

    def _set_aside(self, damaged: Sequence[Damaged]) -> None:
        for d in damaged:
            aside = self.path.with_name(f"{self.path.name}.damaged-{self.epoch}-{d.first}.seg")
            with contextlib.suppress(OSError):
                aside.write_bytes(d.body)
            log.warning("edge spool %s: segment %d is damaged (%s): moved aside to %s; %d samples lost",
                        self.path, d.first, d.problem[:200], aside, d.n)
            try:
                self._db.execute("BEGIN IMMEDIATE")
                lost = self._seg.remove(d.first)
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"edge spool {self.path}: cannot set a damaged segment aside ({exc})"
                                 ) from exc
            self._count_drop("damaged", lost)

    def _batch(self, first: int, last: int, rows: list[tuple[int, int, float, float]], bid: str,
               ) -> SpoolBatch:
        samples = tuple(Sample(self._labels[sid], t, v) for _, sid, t, v in rows)
        return SpoolBatch(bid, first, last, samples, tuple(r[1] for r in rows))

    def labels_of(self, ids: Iterable[int]) -> dict[int, Labels]:
        """The labels of series ``ids`` (the definitions a version-2 batch carries)."""
        with self._lock:
            return {i: self._labels[i] for i in ids if i in self._labels}

    def release(self, batch: SpoolBatch) -> None:
        """The receiver refused ``batch`` for its size (stored none of it): forget the in-flight mark, so
        the next batch may be smaller (a new id: nothing of this one was stored)."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                span = f"{batch.first}-{batch.last}"
                self._db.execute("DELETE FROM meta WHERE key = 'inflight' AND value IN (?, ?)",
                                 (span, f"{span}|{batch.batch_id}"))
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"edge spool {self.path}: cannot release a batch ({exc})") from exc

    def ack(self, batch: SpoolBatch) -> None:
        """The receiver has ``batch``: delete its rows and clear the in-flight mark, in one transaction."""
        with self._lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
                _, damaged = self._seg.ack_through(batch.last)
                self._db.execute("DELETE FROM meta WHERE key = 'inflight'")
                self._db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._rollback()
                raise StoreError(f"edge spool {self.path}: cannot record a delivered batch ({exc})") from exc
            self._set_aside(damaged)

    def backlog(self) -> int:
        """Samples waiting to be delivered."""
        return self._seg.samples

    def stored_bytes(self) -> int:
        """What the waiting samples take, as the byte cap counts it (compressed segments)."""
        return self._seg.bytes

    def dropped(self) -> dict[str, int]:
        """Samples dropped since the spool was made, by reason (``age``, ``bytes``, ``disk_full``)."""
        with self._lock:
            return {r: self._dropped(r) + self._pending.get(r, 0) for r in DROP_REASONS}

    def close(self) -> None:
        """Checkpoint and close (what was appended is durable already)."""
        with self._lock, contextlib.suppress(sqlite3.Error):
            self._db.close()
