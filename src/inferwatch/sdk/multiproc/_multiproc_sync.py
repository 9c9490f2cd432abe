"""A scrape asks every worker to publish now, and waits (bounded) until each has.

Without it a scrape answered by worker A sees worker B's requests only once B's periodic
publish has run. With it, the scrape bumps a flush generation in the shared file; every
worker's publisher looks at that generation every ``POLL_S``, and when it has grown drains
its queue, publishes, and records the generation it has answered (its ack) in the same
transaction as the rows. The scrape reads once every other registered worker has acked
its generation, or after ``WAIT_S`` (a hung worker delays scrapes by that much, never more).
So a request whose response went out before the scrape began is in it, whichever worker
served it and whichever answers the scrape; the request path does nothing more than before.
"""

from __future__ import annotations

import sqlite3

__all__ = ["POLL_S", "SCHEMA", "WAIT_S", "ack", "forget", "request", "requested", "waiting_for"]

POLL_S = 0.005
"""How often each worker's publisher looks for a scrape's request (real seconds)."""

WAIT_S = 5.0
"""The longest a scrape waits for the other workers to publish (real seconds)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS flush_requests(id INTEGER PRIMARY KEY CHECK (id = 0), gen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS flush_acks(worker INTEGER PRIMARY KEY, gen INTEGER NOT NULL);
"""


def request(db: sqlite3.Connection) -> int:
    """Ask every worker to publish (call inside a transaction); the generation to wait for."""
    db.execute("INSERT INTO flush_requests(id, gen) VALUES (0, 1) "
               "ON CONFLICT(id) DO UPDATE SET gen = flush_requests.gen + 1")
    return requested(db)


def requested(db: sqlite3.Connection) -> int:
    """The latest generation a scrape asked for (0: none yet)."""
    row = db.execute("SELECT gen FROM flush_requests WHERE id = 0").fetchone()
    return int(row[0]) if row else 0


def ack(db: sqlite3.Connection, worker: int, gen: int) -> None:
    """Record that ``worker`` has published for ``gen`` (inside the transaction of its rows)."""
    db.execute("INSERT INTO flush_acks(worker, gen) VALUES (?, ?) "
               "ON CONFLICT(worker) DO UPDATE SET gen = max(flush_acks.gen, excluded.gen)", (worker, gen))


def forget(db: sqlite3.Connection, worker: int) -> None:
    """Drop a folded worker's ack."""
    db.execute("DELETE FROM flush_acks WHERE worker = ?", (worker,))


def waiting_for(db: sqlite3.Connection, gen: int, me: int | None) -> list[tuple[int, int, float]]:
    """The other workers that have not acked ``gen``: ``(id, pid, started)``.

    Only workers whose publisher has answered once (it does so as it starts): one without a
    publisher (``interval_s=None``) is never waited for.
    """
    rows = db.execute(
        "SELECT w.id, w.pid, w.started FROM workers w JOIN flush_acks a ON a.worker = w.id "
        "WHERE w.id IS NOT ? AND a.gen < ?", (me, gen))
    return [(int(i), int(p), float(s)) for i, p, s in rows.fetchall()]
