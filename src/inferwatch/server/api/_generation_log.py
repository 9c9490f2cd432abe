"""Scored generations the server has seen, in ``data_dir/generations.sqlite``: the worst of them on request.

The SDK puts a generation's id (and its trace id when traced) on the score
histogram's bucket it was scored into, as an OpenMetrics exemplar. Every round
``harvest`` takes the exemplars of ``inferwatch_generation_score_bucket`` the scrapes
kept and stores each (generation, score name) once, with the series' labels, the
score and the exemplar's time. The table keeps the ``max_rows`` newest (the oldest go
first) and survives a restart; ``worst`` answers ``GET /api/v1/generations/worst``
and the ``inferwatch generations worst`` command. Serve's round hook only picks the new
rows (in memory) and hands them to a writer thread: no SQLite commit (nor the checkpoint
one can trigger) runs on the evaluation thread.

>>> from inferwatch.model import Labels
>>> log = GenerationLog(None)
>>> series = Labels.of("inferwatch_generation_score_bucket", name="judge", route="/chat", model="m",
...                    service="chat", version="v1", prompt_version="p1", tenant="acme", le="0.3")
>>> log.add([(series, {"generation_id": "g1"}, 0.25, 100.0)])
1
>>> [(g.generation_id, g.score, g.route) for g in log.worst("judge", since=0.0)]
[('g1', 0.25, '/chat')]
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from inferwatch._exceptions import StoreError
from inferwatch.model import Labels, open_sqlite, parse_matchers
from inferwatch.model import metrics as catalog
from inferwatch.store import ExemplarStore

__all__ = ["GENERATIONS_FILE", "MAX_ROWS", "GenerationLog", "ScoredGeneration"]

GENERATIONS_FILE = "generations.sqlite"
MAX_ROWS = 100_000
"""Scored generations kept (the oldest go first)."""

_COLUMNS = ("service", "route", "model", "version", "prompt_version", "tenant")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS scored (
    generation_id TEXT NOT NULL, name TEXT NOT NULL, score REAL NOT NULL, time REAL NOT NULL,
    service TEXT NOT NULL, route TEXT NOT NULL, model TEXT NOT NULL, version TEXT NOT NULL,
    prompt_version TEXT NOT NULL, tenant TEXT NOT NULL, trace_id TEXT NOT NULL,
    PRIMARY KEY (generation_id, name));
CREATE INDEX IF NOT EXISTS scored_worst ON scored (name, score, time);
CREATE INDEX IF NOT EXISTS scored_time ON scored (time);
"""
_SCORE_BUCKETS = parse_matchers(f'{{__name__="{catalog.GENERATION_SCORE.name}_bucket"}}')
_Row = tuple[Labels, Mapping[str, str], float, float]
log = logging.getLogger("inferwatch.server")


@dataclass(frozen=True, slots=True)
class ScoredGeneration:
    """One scored generation as the API returns it (``trace_url``: filled by the API)."""

    generation_id: str
    time: float
    score: float
    name: str
    service: str
    route: str
    model: str
    version: str
    prompt_version: str
    tenant: str
    trace_id: str

    def to_json(self, base_url: str = "") -> dict[str, Any]:
        """The API's object: these fields and ``trace_url`` (``""`` when not traced)."""
        url = f"{base_url.rstrip('/')}/api/v1/traces/{self.trace_id}" if self.trace_id else ""
        return {**asdict(self), "trace_url": url}


class GenerationLog:
    """The scored generations (thread-safe); ``path`` None: in memory."""

    def __init__(self, path: Path | None, max_rows: int = MAX_ROWS) -> None:
        self.path, self.max_rows = path, max_rows
        try:
            self._db = open_sqlite(path if path is not None else ":memory:", schema=_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open the scored generations {path}: {exc}") from exc
        self._lock = threading.Lock()
        self._seen: set[tuple[str, str | None, float]] = set()  # harvested: a re-seen one is not written
        self._pending: queue.SimpleQueue[list[_Row] | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._flushed: list[threading.Event] = []  # flush() waiters, set when the writer reaches them

    @classmethod
    def in_dir(cls, state: Path | None) -> GenerationLog:
        """The log in ``state/generations.sqlite`` (None: in memory)."""
        return cls(state / GENERATIONS_FILE if state is not None else None)

    def round_hook(self, exemplars: Callable[[], ExemplarStore]) -> Callable[[float], None]:
        """A ``Server.round_hooks`` entry harvesting ``exemplars()`` (read per round: a reload swaps
        the scrape loop). The round only picks the new rows; a writer thread stores them. A
        failure is logged, never raised into the round."""
        def hook(now: float) -> None:
            try:
                fresh = self._fresh(exemplars())
            except Exception:
                log.exception("scored generations: harvesting the score exemplars failed")
                return
            if fresh:
                self._start_writer()
                self._pending.put(fresh)
        return hook

    def harvest(self, exemplars: ExemplarStore) -> int:
        """Store the score exemplars the scrapes kept that are not stored yet; how many were new."""
        fresh = self._fresh(exemplars)
        return self.add(fresh) if fresh else 0

    def flush(self, timeout: float = 30.0) -> bool:
        """Wait until the rows handed to the writer so far are stored (False: not within ``timeout``)."""
        if self._writer is None:
            return True
        done = threading.Event()
        self._flushed.append(done)
        self._pending.put([])  # an empty batch: the writer sets the waiting events when it reaches it
        return done.wait(timeout)

    def _fresh(self, exemplars: ExemplarStore) -> list[_Row]:
        kept = exemplars.select([_SCORE_BUCKETS], 0.0, float("inf"))
        found = [(r.series, e.labels, e.value, e.t) for r in kept for e in r.exemplars
                 if e.labels.get("generation_id")]
        fresh = [row for row in found
                 if (row[1]["generation_id"], row[0].get("name"), row[3]) not in self._seen]
        if fresh:
            self._seen = {(r[1]["generation_id"], r[0].get("name"), r[3]) for r in found}
        return fresh

    def _start_writer(self) -> None:
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_loop, name="inferwatch-generations",
                                            daemon=True)
            self._writer.start()

    def _write_loop(self) -> None:
        while (rows := self._pending.get()) is not None:
            if rows:
                try:
                    self.add(rows)
                except Exception:
                    log.exception("scored generations: storing %d harvested rows failed", len(rows))
            else:
                while self._flushed:
                    self._flushed.pop().set()

    def add(self, rows: Iterable[_Row]) -> int:
        """Store ``(series, exemplar labels, score, time)`` rows (a generation's score once); how many
        were new."""
        values = [(ex["generation_id"], series.get("name"), float(score), float(t),
                   *(series.get(c) for c in _COLUMNS), ex.get("trace_id", ""))
                  for series, ex, score, t in rows if ex.get("generation_id")]
        with self._lock:
            try:
                with self._db:
                    before = self._db.total_changes
                    self._db.executemany(
                        "INSERT OR IGNORE INTO scored VALUES (?,?,?,?,?,?,?,?,?,?,?)", values)
                    added = self._db.total_changes - before
                    if added:
                        self._db.execute("DELETE FROM scored WHERE rowid IN (SELECT rowid FROM scored "
                                         "ORDER BY time DESC LIMIT -1 OFFSET ?)", (self.max_rows,))
            except sqlite3.Error as exc:
                raise StoreError(f"cannot write the scored generations {self.path}: {exc}") from exc
        return added

    def worst(self, name: str, *, since: float, limit: int = 20, route: str = "", service: str = "",
              model: str = "") -> list[ScoredGeneration]:
        """The ``limit`` lowest scores called ``name`` since ``since``, then the newest first."""
        where, args = ["name = ?", "time >= ?"], [name, since]
        for column, value in (("route", route), ("service", service), ("model", model)):
            if value:
                where.append(f"{column} = ?")
                args.append(value)
        sql = ("SELECT generation_id, time, score, name, service, route, model, version, prompt_version,"
               f" tenant, trace_id FROM scored WHERE {' AND '.join(where)}"
               " ORDER BY score ASC, time DESC LIMIT ?")
        with self._lock:
            try:
                rows = self._db.execute(sql, [*args, limit]).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot read the scored generations {self.path}: {exc}") from exc
        return [ScoredGeneration(*row) for row in rows]

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT count(*) FROM scored").fetchone()[0])

    def close(self) -> None:
        """Store what the writer still holds, then close the file (idempotent)."""
        if self._writer is not None:
            self._pending.put(None)
            self._writer.join(timeout=30)
            self._writer = None
        with self._lock:
            self._db.close()
