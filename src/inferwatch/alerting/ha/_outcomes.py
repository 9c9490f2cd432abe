"""Delayed labels (outcomes) in the pair's database: posted to either replica, polled from either.

The SDK's pollers read with a cursor (``after=SEQ``) and must see every outcome exactly
once, so numbers have to be handed out in commit order. A ``BIGSERIAL`` is not: two
writers take 7 and 8, the one holding 8 commits first, a poller reads up to 8 and never
sees 7. Here every write first locks the one counter row (``SELECT … FOR UPDATE``), numbers
its new rows from the counter and moves it on in the same transaction: writers take turns,
so a number is visible only after every smaller one is. A write is one POST's batch (up to
``max_per_request`` rows, one statement), so the turn is milliseconds; the pollers' reads
take no lock. Chosen over reading by transaction ids (``pg_current_xact_id`` and a snapshot's
``xmin``) because it keeps the pollers' protocol exactly as it is on SQLite — dense numbers,
``last`` the newest given out — and the bound on the table (``kept`` against ``max_rows``)
is counted under the same lock.

Rows here are the server's: ``(request_id, label as JSON, model, time)`` in; ``(seq,
request_id, label, model, time, received)`` out. ``StoreError`` while the database is gone.
"""

from __future__ import annotations

from typing import Any

from inferwatch.alerting.ha._link import SharedLink

__all__ = ["SharedOutcomes"]

_ADD = """
WITH incoming AS (
  SELECT * FROM unnest(%s::int[], %s::text[], %s::text[], %s::text[], %s::float8[])
    AS t(i, request_id, label, model, time)),
fresh AS (
  SELECT * FROM incoming WHERE NOT EXISTS
    (SELECT 1 FROM outcomes o WHERE o.request_id = incoming.request_id AND o.model = incoming.model))
INSERT INTO outcomes SELECT %s + row_number() OVER (ORDER BY i), request_id, label, model, time, %s
FROM fresh
"""


class SharedOutcomes:
    """The ``outcomes`` table and its counter row (see the module docstring)."""

    def __init__(self, link: SharedLink) -> None:
        self._link = link
        with link.transaction() as c:
            row = c.execute("SELECT epoch, kept FROM outcomes_meta").fetchone()
        assert row is not None  # the schema's version 2 inserts it
        self.epoch, self.kept = str(row[0]), int(row[1])
        """The sequence's name (one per database); outcomes kept (as of the last call)."""
        self._pruned = float("-inf")

    def add(self, rows: list[tuple[str, str, str, float | None]], now: float, retention: float,
            max_rows: int) -> tuple[int, int, int, int]:
        """Store the ``rows`` whose (request id, model) is new (the caller dropped a batch's repeats),
        bound the table; ``(added, last number, deleted by age, deleted beyond max_rows)``."""
        cols = list(zip(*rows, strict=True)) if rows else [(), (), (), ()]
        with self._link.transaction() as c:
            last, kept = self._lock(c)
            added = int(c.execute(_ADD, (list(range(len(rows))), *(list(col) for col in cols), last,
                                         now)).rowcount)
            last += added
            old = int(c.execute("DELETE FROM outcomes WHERE received < %s", (now - retention,)).rowcount)
            over = max(0, kept + added - old - max_rows)
            if over:
                c.execute("DELETE FROM outcomes WHERE seq IN "
                          "(SELECT seq FROM outcomes ORDER BY seq LIMIT %s)", (over,))
            self.kept = kept + added - old - over
            c.execute("UPDATE outcomes_meta SET last = %s, kept = %s", (last, self.kept))
        return added, last, old, over

    def after(self, seq: int, limit: int, model: str | None, now: float, retention: float
              ) -> tuple[list[tuple[Any, ...]], int, int]:
        """Up to ``limit`` rows numbered above ``seq`` (of ``model`` and of none, when given);
        ``(rows, last number given out, deleted by age)``. Outcomes past ``retention`` are deleted
        first (at most once a minute), unless a writer holds the counter now (it deletes them itself)."""
        where, args = "seq > %s AND seq <= %s", [seq]
        if model is not None:
            where += " AND (model = %s OR model = '')"
        with self._link.transaction() as c:
            old = 0
            locked = abs(now - self._pruned) >= 60.0 and c.execute(
                "SELECT last FROM outcomes_meta FOR UPDATE SKIP LOCKED").fetchone() is not None
            if locked:
                self._pruned = now
                old = int(c.execute("DELETE FROM outcomes WHERE received < %s", (now - retention,)).rowcount)
                if old:
                    c.execute("UPDATE outcomes_meta SET kept = kept - %s", (old,))
            # ``last`` first: every row numbered up to it has committed (it moves in their transaction)
            last, self.kept = (int(x) for x in c.execute("SELECT last, kept FROM outcomes_meta").fetchone()
                               or (0, 0))
            got = c.execute(f"SELECT seq, request_id, label, model, time, received FROM outcomes "
                            f"WHERE {where} ORDER BY seq LIMIT %s",
                            (*args, last, *([model] if model is not None else []), limit)).fetchall()
        return list(got), last, old

    @staticmethod
    def _lock(c: Any) -> tuple[int, int]:
        row = c.execute("SELECT last, kept FROM outcomes_meta FOR UPDATE").fetchone()
        return int(row[0]), int(row[1])

    def close(self) -> None:
        """Close its connection."""
        self._link.close()
