"""``TraceStore``: recent spans in SQLite, bounded by age and by span count; queried by trace.

The server writes what ``POST /v1/traces`` decoded and reads traces back for
the API. Old spans go first: every write deletes spans that started before
``now - retention_s`` and, past ``max_spans``, the oldest ones.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from inferwatch.model import Clock, SystemClock, open_sqlite

__all__ = ["DEFAULT_MAX_SPANS", "DEFAULT_RETENTION_S", "SpanEvent", "SpanRecord", "TraceStore",
           "TraceSummary"]

DEFAULT_RETENTION_S = 24 * 3600.0
DEFAULT_MAX_SPANS = 1_000_000
"""About 300 MB of SQLite at typical span sizes; the oldest spans go beyond it."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS spans (
  trace_id TEXT NOT NULL, span_id TEXT NOT NULL, parent_span_id TEXT NOT NULL, service TEXT NOT NULL,
  name TEXT NOT NULL, kind INTEGER NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL,
  status_code INTEGER NOT NULL, attributes TEXT NOT NULL, PRIMARY KEY (trace_id, span_id)
);
CREATE INDEX IF NOT EXISTS spans_start ON spans (start_ns);
CREATE INDEX IF NOT EXISTS spans_service_start ON spans (service, start_ns);
"""


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """An event of a span (``gen_ai.evaluation.result``, ``exception``...): read on receipt, not stored."""

    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span as stored (ids in lower-case hex; ``status_code`` 2 is an error, as in OTLP)."""

    trace_id: str
    span_id: str
    parent_span_id: str
    service: str
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    """As received (the store keeps the span without them)."""

    def to_json(self) -> dict[str, Any]:
        """The API's JSON shape (durations in seconds besides the raw nanoseconds)."""
        out = asdict(self)
        if not self.events:
            del out["events"]
        return {**out, "duration_s": (self.end_ns - self.start_ns) / 1e9}


@dataclass(frozen=True, slots=True)
class TraceSummary:
    """One trace in a listing: its root, services, extent and whether any span failed."""

    trace_id: str
    root_service: str
    root_name: str
    start_ns: int
    duration_s: float
    spans: int
    error: bool

    def to_json(self) -> dict[str, Any]:
        """The listing's JSON shape."""
        return asdict(self)


class TraceStore:
    """Spans in one SQLite database (``":memory:"`` for a memory-only server); thread-safe."""

    def __init__(self, path: Path | str = ":memory:", *, retention_s: float = DEFAULT_RETENTION_S,
                 max_spans: int = DEFAULT_MAX_SPANS, clock: Clock | None = None) -> None:
        self._db = open_sqlite(path, wal=False, synchronous=None, schema=_SCHEMA)
        self._lock = threading.Lock()
        self.retention_s, self.max_spans = retention_s, max_spans
        self._clock: Clock = clock or SystemClock()

    def add(self, spans: Sequence[SpanRecord]) -> None:
        """Store ``spans`` (a span sent twice is stored once), then prune by age and count."""
        rows = [(s.trace_id, s.span_id, s.parent_span_id, s.service, s.name, s.kind, s.start_ns, s.end_ns,
                 s.status_code, json.dumps(s.attributes, default=str)) for s in spans]
        oldest = int((self._clock.now() - self.retention_s) * 1e9)
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT OR REPLACE INTO spans VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            self._db.execute("DELETE FROM spans WHERE start_ns < ?", (oldest,))
            (count,) = self._db.execute("SELECT COUNT(*) FROM spans").fetchone()
            if count > self.max_spans:
                self._db.execute("DELETE FROM spans WHERE rowid IN (SELECT rowid FROM spans "
                                 "ORDER BY start_ns LIMIT ?)", (count - self.max_spans,))

    def trace(self, trace_id: str) -> list[SpanRecord]:
        """Every stored span of ``trace_id``, by start time (empty when unknown)."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM spans WHERE trace_id = ? ORDER BY start_ns",
                                    (trace_id,)).fetchall()
        return [_record(r) for r in rows]

    def traces(self, *, service: str | None = None, min_duration_s: float = 0.0, start_ns: int = 0,
               end_ns: int = 2**63 - 1, limit: int = 20) -> list[TraceSummary]:
        """Traces touching ``service`` that started in ``[start_ns, end_ns]`` and lasted ``min_duration_s``+.

        Newest first; at most ``limit``.
        """
        where, args = "start_ns BETWEEN ? AND ?", [start_ns, end_ns]
        args_: list[Any] = args
        if service:
            where, args_ = where + " AND service = ?", [*args, service]
        sql = (f"SELECT trace_id, MIN(start_ns), MAX(end_ns), COUNT(*), MAX(status_code = 2) FROM spans "
               f"WHERE trace_id IN (SELECT DISTINCT trace_id FROM spans WHERE {where}) GROUP BY trace_id "
               f"HAVING MAX(end_ns) - MIN(start_ns) >= ? ORDER BY MIN(start_ns) DESC LIMIT ?")
        with self._lock:
            rows = self._db.execute(sql, (*args_, int(min_duration_s * 1e9), limit)).fetchall()
            roots = {r[0]: self._root(r[0]) for r in rows}
        return [TraceSummary(tid, *roots[tid], t0, (t1 - t0) / 1e9, n, bool(err))
                for tid, t0, t1, n, err in rows]

    def stage_durations(self, service: str, start_ns: int, end_ns: int) -> list[tuple[str, float, str]]:
        """``(stage, duration_s, trace_id)`` of the internal non-root spans of ``service`` started then.

        SERVER and CLIENT spans are the hops between services, not stages: a
        service's server span has a parent when its caller traces too.
        """
        with self._lock:
            rows = self._db.execute(
                "SELECT name, (end_ns - start_ns) / 1e9, trace_id FROM spans WHERE service = ? "
                "AND parent_span_id != '' AND kind NOT IN (2, 3) AND start_ns BETWEEN ? AND ?",
                (service, start_ns, end_ns),
            ).fetchall()
        return [(str(n), float(d), str(t)) for n, d, t in rows]

    def _root(self, trace_id: str) -> tuple[str, str]:
        row = self._db.execute("SELECT service, name FROM spans WHERE trace_id = ? ORDER BY "
                               "(parent_span_id != '') , start_ns LIMIT 1", (trace_id,)).fetchone()
        return (str(row[0]), str(row[1])) if row else ("", "")

    def count(self) -> int:
        """Spans stored now."""
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM spans").fetchone()[0])

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()


def _record(row: Sequence[Any]) -> SpanRecord:
    trace_id, span_id, parent, service, name, kind, start, end, status, attributes = row
    return SpanRecord(trace_id, span_id, parent, service, name, kind, start, end, status,
                      json.loads(attributes))
