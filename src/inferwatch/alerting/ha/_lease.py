"""The sender's lease: a row with a holder and a renewal counter; whoever holds it delivers.

Expiry is judged without comparing two machines' clocks. The holder bumps the row's
``beat`` every round; another replica notes, on its own clock, when it first saw the row
as it is now, and takes it only once it saw no renewal for ``duration`` seconds of its own
clock — with a compare-and-swap on the holder and the beat it saw, so two replicas never
take it together. The holder stops delivering ``duration`` after the start of its last
renewal that landed. Since the follower can only have seen that renewal after it began,
the follower takes over no earlier than the holder stops, whatever the offset between the
replicas' clocks (Kubernetes' leader election judges its leases the same way); only clock
*rates* must agree, which every clock's do to parts per million over a lease.

Why not the database's clock (``clock_timestamp()``): every part of inferwatch reads time
from an injected clock (simulated in the tests, compressed by ``serve --speed``), and the
lease has to run on that clock too.
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

    def shared_write(self, sql: str, params: tuple[object, ...] = ()) -> int:
        """One statement (the rows it changed); ``StoreError`` while the database is gone."""


@dataclass(frozen=True, slots=True)
class LeaseHolder:
    """Who holds the lease, until when (on this replica's clock: ``duration`` after this replica
    last saw it renewed, or, its own, after it last renewed it)."""

    holder: str
    expires: float


class Lease:
    """The ``lease`` row: ``renew(now)`` takes or keeps it for ``duration`` seconds.

    A replica that stops renewing (killed, partitioned, its connection lost) loses it
    ``duration`` after its last renewal, as its peer's clock counts; a replica that stops
    cleanly gives it up at once.
    """

    def __init__(self, db: SharedDB, replica: str, duration: float) -> None:
        self._db, self.replica, self.duration = db, replica, duration
        self._seen: tuple[str, int] | None = None  # the row (holder, beat) as this replica last read it
        self._seen_at = 0.0  # when (this replica's clock) it first read the row so

    def renew(self, now: float) -> bool:
        """Take or keep the lease; whether this replica holds it now."""
        mine = self._db.shared_write("UPDATE lease SET beat=beat+1, expires=? WHERE name=? AND holder=?",
                                     (now + self.duration, _NAME, self.replica))
        if not mine:
            rows = self._db.shared_query("SELECT holder, beat FROM lease WHERE name=?", (_NAME,))
            if not rows:  # nobody holds it (a first start, or the holder gave it up)
                mine = self._db.shared_write("INSERT INTO lease (name, holder, expires, beat) VALUES "
                                             "(?,?,?,0) ON CONFLICT (name) DO NOTHING",
                                             (_NAME, self.replica, now + self.duration))
            else:
                row = (str(rows[0][0]), int(str(rows[0][1])))
                if row != self._seen:  # renewed (or taken) since the last look: its duration starts now
                    self._seen, self._seen_at = row, now
                elif now - self._seen_at >= self.duration:  # no renewal seen for a whole lease
                    mine = self._db.shared_write(
                        "UPDATE lease SET holder=?, beat=beat+1, expires=? WHERE name=? AND holder=? "
                        "AND beat=?", (self.replica, now + self.duration, _NAME, row[0], row[1]))
        if mine:
            self._seen, self._seen_at = (self.replica, -1), now
        return bool(mine)

    def holder(self) -> LeaseHolder | None:
        """The holder as this replica's last ``renew`` saw it (``None``: nobody, or not looked yet)."""
        if self._seen is None:
            return None
        return LeaseHolder(self._seen[0], self._seen_at + self.duration)

    def release(self) -> None:
        """Give the lease up (a clean stop: the peer takes over without waiting for the expiry)."""
        self._db.shared_write("DELETE FROM lease WHERE name=? AND holder=?", (_NAME, self.replica))
