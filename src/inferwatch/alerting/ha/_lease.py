"""The sender's lease: a row with a holder and an expiry; whoever holds it delivers.

Renewing and taking are one statement (an upsert that only overwrites the row when
it is this replica's or has expired), so two replicas never both hold it. Times are
read from the injected clock of each replica: keep their clocks in step (NTP), as
Alertmanager's silences need too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["Lease", "LeaseHolder"]

_NAME = "sender"


class SharedDB(Protocol):
    """Statements that only ever run in the shared database (never journaled)."""

    def shared_query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Rows; ``StoreError`` while the database is gone."""

    def shared_write(self, sql: str, params: tuple[object, ...] = ()) -> None:
        """One statement; ``StoreError`` while the database is gone."""


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """Who holds the lease, until when."""

    holder: str
    expires: float


class Lease:
    """The ``lease`` row: ``renew(now)`` takes or keeps it for ``duration`` seconds.

    A replica that stops renewing (killed, partitioned, its connection lost) loses it
    ``duration`` after its last renewal; a replica that stops cleanly gives it up at once.
    """

    def __init__(self, db: SharedDB, replica: str, duration: float) -> None:
        self._db, self.replica, self.duration = db, replica, duration

    def renew(self, now: float) -> bool:
        """Take or keep the lease; whether this replica holds it now."""
        self._db.shared_write("INSERT INTO lease VALUES (?,?,?) ON CONFLICT (name) DO UPDATE SET "
                              "holder=EXCLUDED.holder, expires=EXCLUDED.expires "
                              "WHERE lease.holder=EXCLUDED.holder OR lease.expires < ?",
                              (_NAME, self.replica, now + self.duration, now))
        held = self.holder()
        return held is not None and held.holder == self.replica

    def holder(self) -> LeaseHolder | None:
        """The holder as the database has it (``None``: nobody yet)."""
        rows = self._db.shared_query("SELECT holder, expires FROM lease WHERE name=?", (_NAME,))
        return LeaseHolder(str(rows[0][0]), float(str(rows[0][1]))) if rows else None

    def release(self) -> None:
        """Give the lease up (a clean stop: the peer takes over without waiting for the expiry)."""
        self._db.shared_write("DELETE FROM lease WHERE name=? AND holder=?", (_NAME, self.replica))
