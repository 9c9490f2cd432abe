"""Several worker processes, one truth: a shared SQLite file every worker publishes to.

gunicorn ``-w N`` and ``uvicorn --workers N`` run N Python processes, each with
its own ``Monitor``; a scrape reaches one of them. With ``INFERWATCH_MULTIPROC_DIR``
(or ``Monitor(..., multiprocess_dir=DIR)``) each monitor publishes its
aggregated state into ``DIR/inferwatch-multiproc.sqlite`` (WAL mode) and every
exposition answers for all workers, live and dead.

Why this shape:

- The request thread is untouched: it still only appends to the recorder's
  queue. A background thread per worker publishes every ``FLUSH_INTERVAL_S``:
  it renders the monitor's families (the same ones a single-process scrape
  would serve, so every aggregator's counters, gauges and histograms are
  carried with no per-metric code) and upserts only the samples that changed,
  in one transaction, keyed by the worker's row id.
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

Freshness: a scrape answered by worker A first drains A's queue and publishes
A's state, so A's own requests are all in it; another worker B's requests
appear once B has published, at most ``FLUSH_INTERVAL_S`` (plus the queue's
5 ms) after they were recorded. Counters never go backwards: a worker's
published values only grow, and compaction moves them into the archive in the
same transaction that deletes them. A worker killed with SIGKILL loses what it
recorded after its last publish (at most ``FLUSH_INTERVAL_S``).

Limits: all workers must share one pid namespace (one host or one container);
the Monitor must be created in each worker (gunicorn's default, not with
``--preload``; ``uvicorn --workers`` always does): a process holding an open
store must not fork workers (SQLite connections do not survive a fork); the file keeps totals across
a restart of the whole server (delete the directory at deploy to start from 0).
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil
from prometheus_client.metrics_core import Metric
from prometheus_client.samples import Exemplar, Sample

from inferwatch.model import metrics as catalog
from inferwatch.model import open_sqlite
from inferwatch.sdk._multiproc_file import SharedFile

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

_MONOTONIC_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_count", "_sum"),
    "summary": ("_count", "_sum"),
}

_SCHEMA = """
CREATE TABLE IF NOT EXISTS workers(
    id INTEGER PRIMARY KEY AUTOINCREMENT, pid INTEGER NOT NULL, started REAL NOT NULL);
CREATE TABLE IF NOT EXISTS families(
    name TEXT PRIMARY KEY, type TEXT NOT NULL, help TEXT NOT NULL, unit TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS samples(
    worker INTEGER NOT NULL, name TEXT NOT NULL, labels TEXT NOT NULL, family TEXT NOT NULL,
    mono INTEGER NOT NULL, value REAL NOT NULL, exemplar TEXT, ex_ts REAL,
    PRIMARY KEY (worker, name, labels)) WITHOUT ROWID;
"""

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

Row = tuple[str, int, float, str | None, float | None]
"""One sample as published: family, monotonic flag, value, exemplar JSON, exemplar timestamp."""

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
        try:
            step()
        except (sqlite3.Error, OSError) as exc:
            self._file.failed(exc, doing)
            return False
        return True

    # --- publishing -------------------------------------------------------------------------
    def publish(self) -> None:
        """Write this worker's current state (only the samples that changed since the last write)."""
        with self._lock:
            if not self._retired:
                self._guarded("publishing to", self._publish)

    def _publish(self) -> None:
        families = self._local()
        worker = self._register()
        rows = dict(_flatten(families))
        meta = {(f.name, f.type, f.documentation, f.unit) for f in families} - self._meta
        changed = [(worker, n, lb, *r) for (n, lb), r in rows.items() if self._written.get((n, lb)) != r]
        gone = [(worker, n, lb) for n, lb in self._written.keys() - rows.keys()]
        if changed or gone or meta:
            with _transaction(self._db):
                self._db.executemany(
                    "INSERT OR REPLACE INTO families(name, type, help, unit) VALUES (?, ?, ?, ?)", meta)
                self._db.executemany(_UPSERT, changed)
                self._db.executemany("DELETE FROM samples WHERE worker = ? AND name = ? AND labels = ?", gone)
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

    # --- reading ----------------------------------------------------------------------------
    def families(self) -> list[Metric]:
        """Every worker's families merged (this worker's state published first).

        If the shared file fails (disk full, file damaged), this worker's own families are
        served, and the error logged: a scrape never fails because of the store.
        """
        with self._lock:
            if not self._retired:
                self._start()
                if not self._guarded("publishing to", self._publish) and self._file.is_open:
                    self._guarded("publishing to", self._publish)  # into the file the repair started
            out: list[Metric] = []
            if self._guarded("reading", lambda: out.extend(self._merged())):
                return out
            return self._local()

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
    def _start(self) -> None:
        """Start publishing periodically (on the first read: the monitor is built by then)."""
        if self._thread is None and self._interval is not None:
            self._thread = threading.Thread(
                target=self._run, args=(self._interval,), name="inferwatch-multiproc", daemon=True)
            self._thread.start()

    def _run(self, interval_s: float) -> None:
        while not self._stop.wait(interval_s):
            try:
                with self._lock:
                    if self._retired:
                        return
                    if self._guarded("publishing to", self._publish):
                        self._guarded("compacting", self._compact)
            except Exception:  # a bug, not the file: this thread must keep going
                log.exception("inferwatch sdk: publishing to %s failed; retrying", self.path)

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


def _flatten(families: Iterable[Metric]) -> Iterator[tuple[tuple[str, str], Row]]:
    """The samples worth publishing, keyed by (sample name, canonical labels JSON)."""
    for f in families:
        suffixes = _MONOTONIC_SUFFIXES.get(f.type)
        for s in f.samples:
            mono = suffixes is not None
            if suffixes is not None and (not s.name.endswith(suffixes) or s.name == f.name):
                continue  # _created, summary quantiles: not mergeable
            ex, ex_ts = None, None
            if s.exemplar is not None:
                ex_ts = float(s.exemplar.timestamp or 0.0)
                ex = json.dumps([s.exemplar.labels, s.exemplar.value, s.exemplar.timestamp])
            labels = json.dumps(sorted(s.labels.items()), separators=(",", ":"))
            yield (s.name, labels), (f.name, int(mono), float(s.value), ex, ex_ts)


def _family(name: str, typ: str, help_: str, unit: str, samples: list[Sample]) -> Metric:
    family = Metric(name, help_, typ, unit)
    family.samples = sorted(samples, key=_sample_order)
    return family


_SUFFIX_RANK = {"_bucket": 0, "_count": 1, "_sum": 2}


def _sample_order(s: Sample) -> tuple[Any, ...]:
    """Series by labels; within a histogram series the buckets by bound, then _count, _sum."""
    rest = sorted((k, v) for k, v in s.labels.items() if k != "le")
    le = float(s.labels["le"]) if "le" in s.labels else 0.0
    return rest, _SUFFIX_RANK.get(s.name[s.name.rfind("_"):], 3), le
