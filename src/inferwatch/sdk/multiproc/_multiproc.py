"""Several worker processes, one truth: a shared SQLite file every worker publishes to.

gunicorn ``-w N`` and ``uvicorn --workers N`` run N Python processes, each with
its own ``Monitor``; a scrape reaches one of them. With ``INFERWATCH_MULTIPROC_DIR``
(or ``Monitor(..., multiprocess_dir=DIR)``) each monitor publishes its
aggregated state into ``DIR/inferwatch-multiproc.sqlite`` (WAL mode) and every
exposition answers for all workers, live and dead.

Why this shape:

- The request thread is untouched: it only appends to the recorder's queue. A
  background thread per worker publishes every ``FLUSH_INTERVAL_S`` and whenever a
  scrape asks: it renders the monitor's families (those a single-process scrape
  serves, so every aggregator is carried with no per-metric code) and upserts the
  samples that changed, in one transaction, keyed by the worker's row id.
- A worker is identified by (pid, process start time) from psutil, so a
  reused pid is a different worker. A worker whose process is gone (or a
  zombie) is *compacted*: its monotonic samples (counter totals, histogram
  buckets, ``_sum`` and ``_count``) are added into the archive rows (worker
  0) and its rows are deleted. The archive holds one row per series, so a
  scrape reads (live workers + 1) x series rows however many workers ever
  lived. A worker exiting normally (``max_requests`` recycling, shutdown)
  folds itself in at exit; a killed one is folded by the next live worker
  that looks (every publish, every scrape, every start).
- Merge rules: counters, histograms and summaries' ``_count``/``_sum`` are
  summed over live workers and the archive (histogram buckets add exactly;
  ``_created`` samples and summary quantiles are not merged and are left
  out); an exemplar is the most recent one of any worker. Gauges (and
  info/stateset/unknown families) are per live worker, with a ``pid`` label,
  and vanish with their worker; the gauges in ``SUMMED_GAUGES`` (requests in
  flight) are summed over live workers instead.

Freshness: a scrape asks every other worker to publish now and waits (bounded) until each
has (``_multiproc_sync``): it counts every request answered before it began. Counters never
go backwards (compaction moves values into the archive in the transaction that deletes
them). A worker killed with SIGKILL loses only what it recorded after its last publish.

Limits: one pid namespace (host or container); a Monitor per worker (not gunicorn's ``--preload``:
SQLite does not survive a fork); totals outlive a restart (delete the file at deploy for 0).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import psutil
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Exemplar, Sample

from inferwatch.model import metrics as catalog
from inferwatch.model import open_sqlite
from inferwatch.sdk.multiproc import _multiproc_sync as sync
from inferwatch.sdk.multiproc._multiproc_file import SharedFile
from inferwatch.sdk.multiproc._multiproc_rows import Row, flatten
from inferwatch.sdk.multiproc._multiproc_rows import family as _family

__all__ = ["DB_NAME", "FLUSH_INTERVAL_S", "SUMMED_GAUGES", "MultiprocStore", "process_alive"]

log = logging.getLogger("inferwatch.sdk")

DB_NAME = "inferwatch-multiproc.sqlite"
"""The one file in the multiprocess directory."""

FLUSH_INTERVAL_S = 0.5
"""How often each worker publishes its state (real seconds): other workers' freshness."""

ARCHIVE = 0
"""Worker id of the rows holding the folded totals of dead workers."""

PID_LABEL = "pid"
"""The label that tells per-worker gauges apart."""

SUMMED_GAUGES = frozenset({catalog.INFLIGHT_REQUESTS.name})
"""Gauges summed over live workers (no ``pid`` label): requests in flight in the whole service."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workers(
    id INTEGER PRIMARY KEY AUTOINCREMENT, pid INTEGER NOT NULL, started REAL NOT NULL);
CREATE TABLE IF NOT EXISTS families(
    name TEXT PRIMARY KEY, type TEXT NOT NULL, help TEXT NOT NULL, unit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS samples(
    worker INTEGER NOT NULL, name TEXT NOT NULL, labels TEXT NOT NULL, family TEXT NOT NULL,
    mono INTEGER NOT NULL, value REAL NOT NULL, exemplar TEXT, ex_ts REAL,
    PRIMARY KEY (worker, name, labels)) WITHOUT ROWID;
""" + sync.SCHEMA

_UPSERT = """
INSERT INTO samples(worker, name, labels, family, mono, value, exemplar, ex_ts)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(worker, name, labels) DO UPDATE SET
    family = excluded.family, mono = excluded.mono, value = excluded.value,
    exemplar = excluded.exemplar, ex_ts = excluded.ex_ts
"""

# A dead worker's monotonic samples are added into the archive rows; the newest exemplar wins.
_FOLD = """
INSERT INTO samples(worker, name, labels, family, mono, value, exemplar, ex_ts)
SELECT 0, name, labels, family, 1, value, exemplar, ex_ts FROM samples WHERE worker = ? AND mono = 1
ON CONFLICT(worker, name, labels) DO UPDATE SET
    value = samples.value + excluded.value,
    exemplar = CASE WHEN coalesce(excluded.ex_ts, -1) > coalesce(samples.ex_ts, -1)
                    THEN excluded.exemplar ELSE samples.exemplar END,
    ex_ts = max(coalesce(samples.ex_ts, -1), coalesce(excluded.ex_ts, -1))
"""

# SQLite's bare columns: with exactly one max(), exemplar comes from the row holding the max.
_MERGED = """
SELECT family, name, labels, sum(value), exemplar, max(ex_ts) FROM samples
WHERE mono = 1 GROUP BY name, labels
"""

_PER_WORKER = """
SELECT s.family, s.name, s.labels, s.value, w.pid FROM samples s JOIN workers w ON w.id = s.worker
WHERE s.mono = 0
"""

_T = TypeVar("_T")
Identity = Callable[[], tuple[int, float]]
Alive = Callable[[int, float], bool]


def process_identity() -> tuple[int, float]:
    """This process's (pid, start time): a reused pid has another start time."""
    pid = os.getpid()
    return pid, psutil.Process(pid).create_time()


def process_alive(pid: int, started: float) -> bool:
    """Whether the process ``pid`` that started at ``started`` still runs (a zombie does not)."""
    try:
        proc = psutil.Process(pid)
        return bool(abs(proc.create_time() - started) < 0.01 and proc.status() != psutil.STATUS_ZOMBIE)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


class MultiprocStore:
    """One worker's handle on the shared file: publishes ``local()`` and reads the merged view."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        local: Callable[[], list[Metric]],
        flush: Callable[[float], bool],
        *,
        interval_s: float | None = FLUSH_INTERVAL_S,
        identity: Identity = process_identity,
        alive: Alive = process_alive,
    ) -> None:
        self.path = Path(directory) / DB_NAME
        self._local, self._flush = local, flush
        self._identity, self._alive = identity, alive
        self._lock = threading.Lock()  # one connection, used by the publisher and by scrapes
        self._file = SharedFile(self.path, _connect)  # never raises: a broken file degrades, see there
        self._generation = self._file.generation
        self._worker: int | None = None
        self._pid = 0
        self._written: dict[tuple[str, str], Row] = {}
        self._meta: set[tuple[str, str, str, str]] = set()
        self._retired = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._interval = interval_s
        self._acked = 0  # the last flush generation this worker published for
        with self._lock:
            self._guarded("starting", self._compact)  # a starting worker usually replaces a dead one
        atexit.register(self.close)

    @property
    def errors(self) -> int:
        """Failures of the shared file so far (``inferwatch_sdk_errors_total{kind="multiprocess"}``)."""
        return self._file.errors

    @property
    def _db(self) -> sqlite3.Connection:
        db = self._file.db()  # raises sqlite3.Error (Unavailable) while the file is failing
        if self._file.generation != self._generation:  # a new file: this worker's rows are not in it
            self._generation, self._worker, self._written, self._meta = self._file.generation, None, {}, set()
        return db

    def _guarded(self, doing: str, step: Callable[[], object]) -> bool:
        """Run ``step`` on the shared file; on a failure let the file count, log and repair it."""
        return self._try(doing, lambda: step() or True) is not None

    def _try(self, doing: str, step: Callable[[], _T]) -> _T | None:
        """``step()``'s value, or None after a failure of the shared file (counted, logged, repaired)."""
        try:
            return step()
        except (sqlite3.Error, OSError) as exc:
            self._file.failed(exc, doing)
            return None

    # --- publishing -------------------------------------------------------------------------
    def publish(self) -> None:
        """Write this worker's current state (only the samples that changed since the last write)."""
        with self._lock:
            if not self._retired:
                self._guarded("publishing to", self._publish)

    def _publish(self, ack: int | None = None) -> None:
        """Write what changed; with ``ack``, also that this worker answered that flush generation."""
        families = self._local()
        worker = self._register()
        rows = dict(flatten(families))
        meta = {(f.name, f.type, f.documentation, f.unit) for f in families} - self._meta
        changed = [(worker, n, lb, *r) for (n, lb), r in rows.items() if self._written.get((n, lb)) != r]
        gone = [(worker, n, lb) for n, lb in self._written.keys() - rows.keys()]
        if changed or gone or meta or ack is not None:
            with _transaction(self._db):
                self._db.executemany(
                    "INSERT OR REPLACE INTO families(name, type, help, unit) VALUES (?, ?, ?, ?)", meta)
                self._db.executemany(_UPSERT, changed)
                self._db.executemany("DELETE FROM samples WHERE worker = ? AND name = ? AND labels = ?", gone)
                if ack is not None:
                    sync.ack(self._db, worker, ack)
        self._written, self._meta = rows, self._meta | meta

    def _register(self) -> int:
        """This process's worker id (a new one after a fork: the child is another worker)."""
        db = self._db  # first: a new file forgets this worker's id
        pid, started = self._identity()
        if self._worker is None or pid != self._pid:
            with _transaction(db):
                cur = db.execute("INSERT INTO workers(pid, started) VALUES (?, ?)", (pid, started))
            self._worker, self._pid, self._written = int(cur.lastrowid or 0), pid, {}
        return self._worker

    def _compact(self) -> int:
        """Fold every dead worker into the archive; the number folded."""
        others = self._db.execute("SELECT id, pid, started FROM workers WHERE id IS NOT ?", (self._worker,))
        dead = [wid for wid, pid, started in others.fetchall() if not self._alive(pid, started)]
        if dead:
            with _transaction(self._db):
                for wid in dead:  # another worker may have folded it already: then it has no rows
                    self._fold(wid)
        return len(dead)

    def _fold(self, worker: int) -> None:
        if self._db.execute("DELETE FROM workers WHERE id = ?", (worker,)).rowcount:
            self._db.execute(_FOLD, (worker,))
            self._db.execute("DELETE FROM samples WHERE worker = ?", (worker,))
            sync.forget(self._db, worker)

    # --- reading ----------------------------------------------------------------------------
    def families(self) -> list[Metric]:
        """Every worker's families merged (this worker's state published first).

        If the shared file fails (disk full, file damaged), this worker's own families are
        served, and the error logged: a scrape never fails because of the store.
        """
        gen = 0
        with self._lock:
            if not self._retired:
                self.start()
                if not self._guarded("publishing to", self._publish) and self._file.is_open:
                    self._guarded("publishing to", self._publish)  # into the file the repair started
                gen = self._try("asking the others to publish in", self._ask) or 0
        if gen:
            self._wait_for_others(gen)  # without the lock: this worker's publisher must run meanwhile
        with self._lock:
            out: list[Metric] = []
            if self._guarded("reading", lambda: out.extend(self._merged())):
                return out
            return self._local()

    def _ask(self) -> int:
        with _transaction(self._db):
            gen = sync.request(self._db)
            if self._worker is not None:
                sync.ack(self._db, self._worker, gen)  # just published: its own rows are current
        self._acked = gen
        return gen

    def _wait_for_others(self, gen: int) -> None:
        """Until every other live worker has published for ``gen``, or ``sync.WAIT_S`` passed."""
        deadline = time.monotonic() + sync.WAIT_S
        while time.monotonic() < deadline:
            with self._lock:
                waiting = self._try("reading", lambda: sync.waiting_for(self._db, gen, self._worker))
            if not waiting or not any(self._alive(pid, started) for _, pid, started in waiting):
                return  # all answered (the dead ones are folded by the read), or the file failed
            time.sleep(sync.POLL_S)  # another process's answer: nothing here to wait on but the file

    def _merged(self) -> list[Metric]:
        self._compact()
        return self._read()

    def _read(self) -> list[Metric]:
        db = self._db
        meta = {name: (typ, help_, unit) for name, typ, help_, unit in db.execute(
            "SELECT name, type, help, unit FROM families")}
        samples: dict[str, list[Sample]] = {name: [] for name in meta}
        for family, name, labels, value, exemplar, _ex_ts in db.execute(_MERGED):
            ex = None if exemplar is None else Exemplar(*json.loads(exemplar))
            samples.setdefault(family, []).append(Sample(name, dict(json.loads(labels)), value, None, ex))
        summed: dict[tuple[str, str, str], float] = {}
        for family, name, labels, value, pid in db.execute(_PER_WORKER):
            if family in SUMMED_GAUGES:
                summed[family, name, labels] = summed.get((family, name, labels), 0.0) + value
            else:
                lbl = {**dict(json.loads(labels)), PID_LABEL: str(pid)}
                samples.setdefault(family, []).append(Sample(name, lbl, value, None, None))
        for (family, name, labels), value in summed.items():
            samples.setdefault(family, []).append(Sample(name, dict(json.loads(labels)), value, None, None))
        return [_family(name, *meta[name], samples[name]) for name in sorted(meta)]

    # --- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Start the publisher (the monitor calls it once built; a read starts it too)."""
        if self._thread is None and self._interval is not None:
            self._thread = threading.Thread(
                target=self._run, args=(self._interval,), name="inferwatch-multiproc", daemon=True)
            self._thread.start()

    def _run(self, interval_s: float) -> None:
        """Publish every ``interval_s``, and at once when a scrape asks (looked for every ``POLL_S``)."""
        last, wait = time.monotonic(), 0.0  # at once: a scrape waits only for workers that answered once
        while not self._stop.wait(wait):
            wait = sync.POLL_S
            try:
                if self._retired:
                    return
                with self._lock:
                    asked = self._try("reading", lambda: sync.requested(self._db)) or 0
                if asked <= self._acked and time.monotonic() - last < interval_s and self._worker is not None:
                    continue
                self._flush(1.0)  # what this worker's requests recorded up to now, aggregated
                last = time.monotonic()
                self._publish_for(asked if asked > self._acked or self._worker is None else None)
            except Exception:  # a bug, not the file: this thread must keep going
                log.exception("inferwatch sdk: publishing to %s failed; retrying", self.path)

    def _publish_for(self, gen: int | None) -> None:
        with self._lock:
            if not self._retired and self._guarded("publishing to", lambda: self._publish(gen)):
                self._acked = max(self._acked, gen or 0)
                self._guarded("compacting", self._compact)

    def close(self) -> None:
        """Publish a last time and fold this worker into the archive (at exit; idempotent).

        Afterwards ``families()`` still answers, read-only.
        """
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        atexit.unregister(self.close)
        try:
            self._flush(1.0)
            with self._lock:
                if self._retired:
                    return
                self._retired = True
                self._guarded("publishing to", self._publish)
                if self._worker is not None:
                    self._guarded("retiring from", self._retire)
        except Exception:
            log.exception("inferwatch sdk: final publish to %s failed", self.path)

    def _retire(self) -> None:
        db = self._db
        if self._worker is not None:
            with _transaction(db):
                self._fold(self._worker)


def _connect(path: Path) -> sqlite3.Connection:
    """Open (or create) the shared file; ``OSError``/``sqlite3.Error`` are ``SharedFile``'s to handle."""
    db = open_sqlite(path, timeout=30.0)  # WAL, NORMAL: a host crash may lose the last publish, never corrupt
    try:
        with _transaction(db):
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)
        db.execute("SELECT count(*) FROM workers").fetchone()  # a damaged file fails here, not later
    except BaseException:
        db.close()
        raise
    return db


@contextmanager
def _transaction(db: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE``: writers queue on the file's lock (busy timeout) instead of failing."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
