"""The spool's segments: compressed runs of samples, numbered by position (the storage under ``Spool``).

Every method runs inside the caller's transaction and keeps the totals (samples, bytes, the next
number) in step; after a rollback the caller calls :meth:`Segments.recount`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from sqlite3 import Connection

from inferwatch._exceptions import InputError
from inferwatch.formats import decode_segment, encode_segment

__all__ = ["SCHEMA", "SEGMENT_BYTES", "Damaged", "Segments"]

SEGMENT_BYTES = 48  # first, n, t_max and bytes as SQLite stores them, with the row's header
_MAX_SAMPLES = 1 << 22  # a decode bound: more than any append or migrated run
_MIGRATE_RUN = 1000  # rows of an older spool to a segment

SCHEMA = """
CREATE TABLE IF NOT EXISTS series (id INTEGER PRIMARY KEY, labels TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS samples (seq INTEGER PRIMARY KEY AUTOINCREMENT,
    series INTEGER NOT NULL, t REAL NOT NULL, v REAL NOT NULL);
CREATE TABLE IF NOT EXISTS segments (first INTEGER PRIMARY KEY, n INTEGER NOT NULL, t_max REAL NOT NULL,
    bytes INTEGER NOT NULL, body BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

Row = tuple[int, int, float, float]  # seq, series id, t, v


@dataclass(frozen=True)
class Damaged:
    """A segment that failed its checksum or would not decode: moved aside by the spool."""

    first: int
    n: int
    body: bytes
    problem: str


class Segments:
    """The ``segments`` table of one spool connection."""

    def __init__(self, db: Connection) -> None:
        self.db = db
        self.samples = self.bytes = self.next = 0
        self.recount()

    def recount(self) -> None:
        """Totals from the table (at open, and after a rolled-back transaction)."""
        n, size, count, end = self.db.execute(
            "SELECT coalesce(sum(n), 0), coalesce(sum(bytes), 0), count(*), coalesce(max(first + n), 1) "
            "FROM segments").fetchone()
        row = self.db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
        self.samples, self.bytes = int(n), int(size) + int(count) * SEGMENT_BYTES
        self.next = max(int(end), int(row[0]) if row else 1)

    def add(self, rows: Sequence[tuple[int, float, float]]) -> None:
        """One segment of ``(series id, t, v)`` rows, numbered from :attr:`next`."""
        self._insert(self.next, rows)
        self.next += len(rows)
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_seq', ?)", (str(self.next),))

    def _insert(self, first: int, rows: Sequence[tuple[int, float, float]]) -> None:
        body = encode_segment([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
        self.db.execute("INSERT INTO segments (first, n, t_max, bytes, body) VALUES (?, ?, ?, ?, ?)",
                        (first, len(rows), max(r[1] for r in rows), len(body), body))
        self.samples += len(rows)
        self.bytes += len(body) + SEGMENT_BYTES

    def _delete(self, where: str, args: tuple[object, ...]) -> int:
        n, size, count = self.db.execute(
            f"SELECT coalesce(sum(n), 0), coalesce(sum(bytes), 0), count(*) FROM segments WHERE {where}",
            args).fetchone()
        if count:
            self.db.execute(f"DELETE FROM segments WHERE {where}", args)
            self.samples -= int(n)
            self.bytes -= int(size) + int(count) * SEGMENT_BYTES
        return int(n)

    def drop_older(self, cutoff: float) -> int:
        """Drop the segments whose newest sample is older than ``cutoff``; the samples dropped."""
        return self._delete("t_max < ?", (cutoff,))

    def drop_over(self, max_bytes: int) -> int:
        """Drop the oldest segments until the rest fit in ``max_bytes``; the samples dropped."""
        if self.bytes <= max_bytes:
            return 0
        excess, upto = self.bytes - max_bytes, None
        for first, size in self.db.execute("SELECT first, bytes FROM segments ORDER BY first"):
            excess -= size + SEGMENT_BYTES
            upto = first
            if excess <= 0:
                break
        return self._delete("first <= ?", (upto,)) if upto is not None else 0

    def remove(self, first: int) -> int:
        """Drop one segment (a damaged one); the samples it held."""
        return self._delete("first = ?", (first,))

    def read(self, first: int, last: int, limit: int) -> tuple[list[Row], list[Damaged]]:
        """Up to ``limit`` rows numbered ``first..last`` in order, and the segments that would not decode."""
        rows: list[Row] = []
        damaged: list[Damaged] = []
        cur = self.db.execute("SELECT first, n, body FROM segments WHERE first + n > ? AND first <= ? "
                              "ORDER BY first", (first, last))
        for start, n, body in cur:
            try:
                ids, ts, vs = decode_segment(bytes(body), _MAX_SAMPLES)
                if len(ids) != n:
                    raise InputError(f"segment: {len(ids)} samples, its row says {n}")
            except InputError as exc:
                damaged.append(Damaged(start, n, bytes(body), str(exc)))
                continue
            lo = max(0, first - start)
            hi = min(n, last - start + 1, lo + limit - len(rows))
            rows += [(start + k, ids[k], ts[k], vs[k]) for k in range(lo, hi)]
            if len(rows) >= limit:
                break
        cur.close()
        return rows, damaged

    def ack_through(self, last: int) -> tuple[int, list[Damaged]]:
        """Delete every sample numbered up to ``last`` (the tail of a segment it ends inside is kept);
        the samples deleted, and the straddling segment if it would not decode."""
        split = self.db.execute("SELECT first, n FROM segments WHERE first <= ? AND first + n - 1 > ?",
                                (last, last)).fetchone()
        gone = self._delete("first + n - 1 <= ?", (last,))
        if split is None:
            return gone, []
        rows, damaged = self.read(last + 1, split[0] + split[1] - 1, split[1])
        if not damaged:
            gone += self.remove(split[0]) - len(rows)
            self._insert(last + 1, [(sid, t, v) for _, sid, t, v in rows])
        return gone, damaged

    def migrate(self, inflight: str | None) -> str | None:
        """Turn an older agent's rows (one a sample) into segments; the in-flight mark, renumbered."""
        if self.db.execute("SELECT 1 FROM samples LIMIT 1").fetchone() is None:
            return inflight
        span, _, bid = (inflight or "").partition("|")
        a, _, b = span.partition("-")
        lo, hi = (int(a), int(b)) if a.isdigit() and b.isdigit() else (0, -1)
        run: list[tuple[int, int, float, float]] = []
        marked = None
        old = self.db.execute("SELECT seq, series, t, v FROM samples ORDER BY seq").fetchall()
        for seq, sid, t, v in old:
            inside = lo <= seq <= hi  # the batch in flight stays one segment
            if run and ((len(run) >= _MIGRATE_RUN and not inside) or (lo <= run[-1][0] <= hi) != inside):
                marked = self._migrated(run, lo, hi) or marked
                run = []
            run.append((seq, sid, t, v))
        marked = (self._migrated(run, lo, hi) if run else None) or marked
        end = self.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'samples'").fetchone()
        self.next = max(self.next, int(end[0]) + 1 if end else 1)
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('next_seq', ?)", (str(self.next),))
        self.db.execute("DELETE FROM samples")
        return f"{marked[0]}-{marked[1]}|{bid}" if marked and bid else None

    def _migrated(self, run: list[tuple[int, int, float, float]], lo: int, hi: int) -> tuple[int, int] | None:
        first = run[0][0]
        self._insert(first, [(sid, t, v) for _, sid, t, v in run])
        return (first, first + len(run) - 1) if lo <= first <= hi else None
