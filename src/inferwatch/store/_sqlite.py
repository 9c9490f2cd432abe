"""The SQLite store: one file, WAL mode, one transaction per append, an in-memory head.

Each ``append`` is validated, then committed as one WAL record (see :mod:`inferwatch.store._disk`
for the layout) before it returns, so a kill -9 loses at most the call in flight. Samples of the
last ``head_window`` (one hour by default) are also held in memory, like Prometheus's head block,
so rule evaluation never reads the disk; the WAL is compacted into per-series chunks every
``compact_every`` seconds and before the head is cut.
"""

from __future__ import annotations

import contextlib
import logging
import math
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from functools import partialmethod
from itertools import compress, repeat
from operator import is_
from pathlib import Path
from sqlite3 import Connection

import numpy as np

from inferwatch._exceptions import InputError, StoreError
from inferwatch.model import Clock, Labels, Matcher, Sample, SystemClock, pinned
from inferwatch.store import _disk
from inferwatch.store._accept import SeenIds, accept_in_order, accept_unique, as_column, each_once, known_ids
from inferwatch.store._checkpoint import Checkpointer
from inferwatch.store._disk_read import disk_then_head
from inferwatch.store._fork import ForkReads
from inferwatch.store._head import NEWEST_WIDE, Head, SampleBuffer, newest
from inferwatch.store._held import failure
from inferwatch.store._index import SeriesIndex
from inferwatch.store._latest import LatestReads
from inferwatch.store._limits import LimitExceeded, SeriesLimits
from inferwatch.store._new_series import NewSeries, distinct
from inferwatch.store._protocol import AppendStats, Series
from inferwatch.store._util import labels_key
from inferwatch.store._validate import check_labels, check_new_labels, check_time, check_value

__all__ = ["SQLiteStore"]

log = logging.getLogger(__name__)
_LABELS = {Labels}


class SQLiteStore(LatestReads, ForkReads):
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
        batch_size: int = 100_000,
        clock: Clock | None = None,
        retention: float | None = None,
        head_window: float = 3600.0,
        compact_every: float = 1800.0,
        max_bytes: int | None = None,
        background_checkpoints: bool = False,
    ) -> None:
        if batch_size < 1 or head_window < 0 or compact_every <= 0:
            raise ValueError("batch_size must be >= 1, head_window >= 0 and compact_every > 0")
        self.path = Path(path)
        self.batch_size = batch_size
        self.retention = retention
        self.head_window = float(head_window)
        self.compact_every = float(compact_every)
        self.stats = AppendStats()
        self.limits: SeriesLimits | None = None
        """Limits every new series must pass (``server.limits``); None: none."""
        self._clock: Clock = clock or SystemClock()
        self._lock = threading.RLock()
        self._file = threading.RLock()
        """The SQLite file's: appends, compaction, disk reads and retention hold it, before ``_lock`` (the
        memory's: index, head, newest samples), which an append takes only around its memory work. A rule
        round's head reads so never wait for a scrape's write of 200,000 samples or a compaction."""
        self._index = SeriesIndex()
        self._head = Head()
        self._by_object = SeenIds()  # a warm scrape's batch of the same objects: one identity pass
        self._keep: dict[int, Labels] = {}
        self._last_t = np.full(1024, -np.inf)
        self._last_v = np.zeros(1024)
        self._next_id = 1
        self._head_from = self._clock.now() - self.head_window
        self._last_compact = self._clock.now()
        self._compact_failing = False
        self._old_in_wal = False  # samples older than the head wait in the WAL (their compaction failed)
        self._conn: sqlite3.Connection | None = _disk.connect(
            self.path, autocheckpoint=not background_checkpoints)
        self.checkpointer = Checkpointer(self.path) if background_checkpoints else None
        try:
            if max_bytes is not None:  # a cap on the file: writes past it fail as on a full disk
                page = self._conn.execute("PRAGMA page_size").fetchone()[0]
                self._conn.execute(f"PRAGMA max_page_count = {max(1, int(max_bytes) // int(page))}")
            self._load(self._conn)
        except sqlite3.Error as exc:
            self._conn.close()
            if self.checkpointer is not None:
                self.checkpointer.close()
            raise StoreError(f"cannot read the store {self.path}: {_disk.reason(exc)}") from exc

    def _load(self, conn: sqlite3.Connection) -> None:
        _disk.compact(conn)  # replay whatever the last process left in the WAL
        for sid, labels in _disk.load_series(conn):
            self._index.add(sid, labels)
            self._next_id = max(self._next_id, sid + 1)
        self._grow_last(self._next_id)
        for sid in self._index.ids():
            last = _disk.last_sample(conn, sid)
            if last is not None:
                self._last_t[sid], self._last_v[sid] = last
        for sid, t, v in _disk.read_chunks(conn, list(self._index.ids()), self._head_from, math.inf):
            buf = self._head.buffers[sid] = SampleBuffer()
            buf.extend(t, v)
        self._head.seal(self._lock, everything=True)

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the store {self.path} is closed")
        return self._conn

    def append(self, samples: Iterable[Sample]) -> None:
        """Add a batch, committed before returning (see the store's append rules)."""
        labels: list[Labels] = []
        ts: list[float] = []
        vs: list[float] = []
        for s in samples:
            t, v = s.t, s.v
            if type(t) is not float or t - t != 0.0:
                t = check_time(t, s.labels)
            if type(v) is not float:
                v = check_value(v, s.labels)
            labels.append(s.labels)
            ts.append(t)
            vs.append(v)
        self.append_columns(labels, ts, vs)

    def append_columns(
        self, labels: Sequence[Labels], t: Sequence[float] | np.ndarray, v: Sequence[float] | np.ndarray
    ) -> None:
        """Add a batch given as columns (the scrape loop's path: no ``Sample`` objects needed)."""
        t_a, v_a = as_column(t, "timestamps"), as_column(v, "values")
        if not len(labels) == t_a.shape[0] == v_a.shape[0]:
            raise InputError(f"columns differ in length: {len(labels)} labels, {t_a.shape[0]} t, "
                             f"{v_a.shape[0]} v")
        finite = np.isfinite(t_a)
        if not finite.all():
            k = int(np.flatnonzero(~finite)[0])
            raise InputError(f"timestamp {t_a[k]!r} of series {labels[k]} is not finite")
        with self._file:  # one append at a time; readers of the memory go on beside its disk write
            with self._lock:
                conn = self._db()
                try:
                    sids, new = self._series_ids(labels)
                except LimitExceeded as exc:  # the whole batch is refused: its samples are discarded
                    self.stats.discarded[exc.reason] = self.stats.discarded.get(exc.reason, 0) + len(labels)
                    raise
                if each_once(sids, self._next_id + (len(new) if new is not None else 0)):
                    keep = accept_unique(self._last_t, self._last_v, sids, t_a, v_a, self.stats)
                else:
                    keep = accept_in_order(self._last_t, self._last_v, sids, t_a, v_a, self.stats)
                sids, t_a, v_a = sids[keep], t_a[keep], v_a[keep]
            self._commit(conn, new, sids, t_a, v_a)
            self._maintain(old_samples=bool(t_a.shape[0]) and float(t_a.min()) < self._head_from)

    def _series_ids(self, labels: Sequence[Labels]) -> tuple[np.ndarray, NewSeries | None]:
        """Series ids of ``labels``, and the new series among them (validated, numbered from the next
        id in order of first sight, not yet registered)."""
        sids = known_ids(self._by_object, labels)
        missing = np.flatnonzero(sids < 0).tolist()
        new = None
        if missing:
            miss = list(labels) if len(missing) == len(labels) else [labels[k] for k in missing]
            if not set(map(type, miss)) <= _LABELS:
                for ls in miss:
                    check_labels(ls)  # raises for the first that is not a label set
            found = list(map(self._index.lookup, miss))
            fresh = found.count(None)
            if fresh < len(found):  # known series in new objects (a scrape's new parse)
                for ls, sid in zip(miss, found, strict=True):
                    if sid is not None:
                        self._remember(ls, sid)
            if not fresh:
                sids[missing] = found  # no None here
            else:  # new series: ids in order of first sight, checked as one batch
                unseen = miss if fresh == len(miss) else list(compress(miss, map(is_, found, repeat(None))))
                once = distinct(unseen, labels)
                new = NewSeries.of(once, self._next_id, labels)
                if self.limits is not None:  # first: a million labels are refused before they are read
                    self.limits.check_new(once, self._index, new)
                check_new_labels(once, new.pairs, new.first_pairs())
                if fresh == len(miss) == len(once):  # all new, each once (a first scrape)
                    sids[missing] = new.ids()
                else:  # one series twice in the batch, or known ones among the new: each once, in order
                    numbered = dict(zip(once, range(self._next_id, self._next_id + len(once)), strict=True))
                    sids[missing] = list(map(numbered.get, miss, found))
        self._grow_last(self._next_id + (len(new) if new is not None else 0))
        return sids, new

    def _make_room(self, adding: int) -> None:
        """Forget the objects seen so far when ``adding`` more would pass the bound (4x the series)."""
        if len(self._by_object) + adding > 4 * len(self._index) + 1024:
            self._by_object.clear()
            self._keep.clear()

    def _remember(self, labels: Labels, sid: int) -> None:
        # Keyed by id(): the object is kept alive in _keep, so its id cannot be reused meanwhile.
        self._make_room(0)
        self._by_object[id(labels)] = sid
        self._keep[id(labels)] = labels

    def _remember_new(self, new: NewSeries) -> None:
        """``_remember`` for a batch of series just created (the index already holds them)."""
        self._make_room(len(new))
        # not in _keep: the index holds these very objects (until retention, which forgets by_object)
        self._by_object.update(zip(map(id, new.labels), range(new.first, new.first + len(new)), strict=True))

    def _grow_last(self, size: int) -> None:
        if size > self._last_t.shape[0]:
            cap = max(size, 2 * self._last_t.shape[0])
            self._last_t = np.concatenate([self._last_t, np.full(cap - self._last_t.shape[0], -np.inf)])
            self._last_v = np.concatenate([self._last_v, np.zeros(cap - self._last_v.shape[0])])

    def _commit(self, conn: sqlite3.Connection, new: NewSeries | None, sids: np.ndarray,
                t: np.ndarray, v: np.ndarray) -> None:
        if not sids.shape[0] and new is None:
            return
        try:
            _disk.write(conn, new, sids, t, v, self.batch_size)
        except sqlite3.Error as exc:
            self.stats.wrote(_disk.reason(exc), failure(exc), int(sids.shape[0]))
            raise StoreError(f"cannot write to the store {self.path}: {_disk.reason(exc)}") from exc
        self.stats.write_error = ""
        if self.checkpointer is not None:  # about what the WAL grew by: 24 bytes a sample, 4 a new label
            self.checkpointer.wrote(24 * int(sids.shape[0]) + (4 * int(new.codes.shape[0]) if new else 0))
        with self._lock:
            created = len(new) if new is not None else 0
            if new is not None:
                self._index.add_batch(new)
                self._remember_new(new)
            self._next_id += created
            self.stats.series_created += created
            self.stats.appended += int(sids.shape[0])
            # Within one series the accepted times ascend, so the last write per id is its newest.
            self._last_t[sids] = t
            self._last_v[sids] = v
            self._head.push_columns(sids, t, v, self._head_from)
        self._head.seal(self._lock)  # the chunks' encoding outside the lock: readers go on meanwhile

    def _maintain(self, *, old_samples: bool) -> None:
        """Compact the WAL when due (or when samples older than the head came in); cut the head."""
        now = self._clock.now()
        cut = now - self.head_window
        cut_head = cut - self._head_from > self.head_window / 4 + 1.0
        self._old_in_wal |= old_samples
        if old_samples or cut_head or now - self._last_compact >= self.compact_every:
            self.compact()
        if cut_head:
            with self._lock:
                self._head.drop_before(cut)
                self._head_from = cut

    def _compact_for_read(self) -> None:
        """Compact before old reads and deletes; on a full disk reads still answer, retention frees space."""
        try:
            self.compact()
        except StoreError as exc:
            if not self._compact_failing:  # once per episode, not once per query
                log.warning("%s; reads go on without compacting", exc)
            self._compact_failing = True
        else:
            self._compact_failing = False

    def compact(self) -> int:
        """Move the WAL into per-series chunks now; return the samples moved."""
        with self._file:
            self._last_compact = self._clock.now()
            try:
                moved, self._old_in_wal = _disk.compact(self._db()), False
                return moved
            except sqlite3.Error as exc:
                raise StoreError(f"cannot compact the store {self.path}: {_disk.reason(exc)}") from exc

    def series_count(self) -> int:
        """How many series the store holds (``server.limits.max_series`` counts these)."""
        return len(self._index)

    def head_memory(self) -> tuple[int, int]:
        """``(samples, bytes)`` the in-memory head holds."""
        return self._head.memory()  # reads a snapshot of the buffers: no lock needed

    def select(self, matchers: Sequence[Matcher], start: float, end: float, latest: bool = False,
               ) -> list[Series]:
        """Series matching ``matchers`` with samples in ``[start, end]`` (``latest``: the head's last)."""
        disk = False  # a read of the head takes the memory's lock only; one of the disk the file's first
        while True:
            with self._file if disk else contextlib.nullcontext(), self._lock, pinned():
                conn, ids = self._db(), self._index.match(matchers)
                out: list[Series] = []
                if start < self._head_from and ids and not disk:
                    disk = True
                    continue
                if start < self._head_from:  # the disk read takes the head's part too
                    ids, out = [], self._select_disk(conn, ids, start, end) if ids else []
                elif latest and len(ids) > NEWEST_WIDE:  # start in the head: its newest there is its last
                    ids, out = newest(ids, self._last_t, self._last_v, start, end, self._index.labels)
            break
        out += self._head.read(ids, start, end, self._index.labels, self._lock, latest=latest)
        out.sort(key=lambda s: s.labels.items_tuple)
        return out

    select_latest = partialmethod(select, latest=True)  # what an instant selector reads (promql's load)

    def _select_disk(self, conn: Connection, ids: list[int], start: float, end: float) -> list[Series]:
        """Chunks before the head, the head after it (everything before the head is compacted)."""
        if self._old_in_wal:  # else all before the head is in chunks: no compaction on a read
            self._compact_for_read()
        try:
            return disk_then_head(conn, self._head, self._index.labels, ids, start, end, self._head_from)
        except (sqlite3.Error, OverflowError) as exc:
            raise StoreError(f"cannot read the store {self.path}: {_disk.reason(exc)}") from exc

    def series(self, matchers: Sequence[Matcher]) -> list[Labels]:
        """Label sets of the matching series."""
        with self._lock:
            self._db()
            return sorted((self._index.labels(sid) for sid in self._index.match(matchers)), key=labels_key)

    def label_values(self, name: str) -> list[str]:
        """Distinct values of label ``name``."""
        with self._lock:
            self._db()
            return self._index.label_values(name)

    def delete_before(self, t: float) -> int:
        """Delete samples older than ``t`` and series left empty; return the samples deleted."""
        if not math.isfinite(t):
            raise InputError(f"retention cutoff {t!r} is not finite")
        with self._file, self._lock:
            conn = self._db()
            self._compact_for_read()  # on a full disk retention must still run: it frees the space
            gone = [sid for sid in self._index.ids() if self._last_t[sid] < t]
            try:
                deleted = _disk.delete_before(conn, t, gone)
            except sqlite3.Error as exc:
                raise StoreError(f"cannot apply retention to {self.path}: {_disk.reason(exc)}") from exc
            self._head.drop_before(t)
            for sid in gone:
                self._head.forget(sid)
                self._index.remove(sid)
                self._last_t[sid] = -np.inf
            self._by_object.clear()
            self._keep.clear()
            return deleted

    def apply_retention(self) -> int:
        """Delete what is older than ``retention`` on the clock; return the samples deleted."""
        if self.retention is None:
            return 0
        return self.delete_before(self._clock.now() - self.retention)

    def integrity_check(self) -> str:
        """SQLite's ``PRAGMA integrity_check`` (``"ok"`` when the file is sound)."""
        with self._file:
            return str(self._db().execute("PRAGMA integrity_check").fetchone()[0])

    def flush(self) -> None:
        """Compact the WAL and checkpoint SQLite's journal (appends are already committed)."""
        with self._file:
            self.compact()
            try:
                self._db().execute("PRAGMA wal_checkpoint(PASSIVE)")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot checkpoint the store {self.path}: {_disk.reason(exc)}") from exc

    def close(self) -> None:
        """Compact, checkpoint and close the file; idempotent."""
        with self._file, self._lock:
            if self._conn is None:
                return
            # A failed compaction or checkpoint is harmless: the next open replays the WAL.
            if self.checkpointer is not None:
                self.checkpointer.close()
            with contextlib.suppress(sqlite3.Error):
                _disk.compact(self._conn)
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()
            self._conn = None
