"""One replica of an HA pair: holds or waits for the sender's lease, sees its peers, reads
what they wrote.

Every ``interval`` (at most a second, so a silence or an acknowledgement written
through the peer is in force here within one) the loop renews or takes the lease,
marks this replica seen, and reads the silences, acknowledgements and episode ids
again. A replica that gains the lease first reads what its peer owed and did (outbox,
notification log, escalations, digests) and then delivers. Nothing here runs on the
evaluation path: it is a thread of its own, and the pipeline's lock is taken only for
a takeover.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from inferwatch._exceptions import StoreError
from inferwatch.alerting._pipeline import Pipeline
from inferwatch.alerting.ha._lease import Lease, LeaseHolder
from inferwatch.alerting.ha._pg import PgStateDB
from inferwatch.model import Clock, Labels
from inferwatch.model import metrics as catalog

__all__ = ["Peer", "Replica", "SoleReplica"]

log = logging.getLogger("inferwatch.alerting.ha")
MAX_INTERVAL_S = 1.0


@dataclass(frozen=True, slots=True)
class Peer:
    """A replica as the database last saw it."""

    name: str
    address: str
    seen: float
    """When this replica last saw it mark itself seen (this replica's clock)."""
    leader: bool
    ready: bool
    """Seen within two leases."""


class Replica:
    """This replica's part in the pair; ``is_leader()`` says whether it delivers now."""

    def __init__(self, db: PgStateDB, pipeline: Pipeline, *, name: str, address: str, lease: float,
                 clock: Clock) -> None:
        self._db, self._pipeline, self.name, self.address = db, pipeline, name, address
        self.lease = Lease(db, name, lease)
        self.clock = clock
        self.interval = min(MAX_INTERVAL_S, lease / 3)
        self._leader = False
        self._held_until = float("-inf")
        self._started = clock.now()
        self.errors = 0
        """Database errors seen by the loop (the ``database errors`` self-alert)."""
        self.down_since: float | None = None
        self._peers: list[Peer] = []
        self._holder: LeaseHolder | None = None  # the lease as the last round read it
        self._stamps: dict[str, tuple[float, float]] = {}  # replica -> (its stamp, when seen changed)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def is_leader(self) -> bool:
        """Whether this replica delivers now: it holds the lease, or the database has been
        gone longer than a lease (fail open: each replica delivers on its own)."""
        now = self.clock.now()
        if self._leader and now < self._held_until:
            return True
        return self.down_since is not None and now - self.down_since >= self.lease.duration

    def step(self, now: float) -> None:
        """One round: the lease, this replica's heartbeat, the peers, the shared state read again."""
        self._pipeline.oncall.replica = self.name  # the history says who sent (again after a reload)
        try:
            if not self._db.up:  # back: what this replica did meanwhile goes to the database first
                self._db.recover()
            leader = self.lease.renew(now)
            self._beat(now)
            if leader and not self._leader:
                log.warning("replica %s takes over delivery", self.name)
                self._pipeline.refresh(taking_over=now)
            elif leader:  # what the peer wrote through its API: in force here within a round
                self._pipeline.refresh()
            else:  # following: also the log and the escalations, should it have to fail open
                self._pipeline.refresh(following=True)
        except StoreError as exc:
            self.errors += 1
            if self.down_since is None:
                self.down_since = now
                log.error("replica %s: %s", self.name, exc)
            return
        if self._leader and not leader:
            log.warning("replica %s lost the lease: its peer delivers", self.name)
        self._leader, self.down_since = leader, None
        if leader:
            self._held_until = now + self.lease.duration

    def _beat(self, now: float) -> None:
        self._db.shared_write("INSERT INTO replicas VALUES (?,?,?,?) ON CONFLICT (name) DO UPDATE SET "
                              "address=EXCLUDED.address, seen=EXCLUDED.seen, started=EXCLUDED.started",
                              (self.name, self.address, now, self._started))
        held = self._holder = self.lease.holder()
        leader = held.holder if held is not None and held.expires >= now else ""
        rows = self._db.shared_query("SELECT name, address, seen FROM replicas ORDER BY name")
        peers = []
        for n, a, s in rows:  # alive while its stamp changes, as this replica's clock counts (no skew)
            name, stamp = str(n), float(str(s))
            if name not in self._stamps and name != self.name:  # ready once seen marking itself again
                self._stamps[name] = (stamp, now - 3 * self.lease.duration)
            elif self._stamps.get(name, (None, 0.0))[0] != stamp:
                self._stamps[name] = (stamp, now)
            seen = self._stamps[name][1]
            peers.append(Peer(name, str(a), seen, name == leader, now - seen <= 2 * self.lease.duration))
        self._peers = peers

    def peers(self) -> list[Peer]:
        """Every replica the database knows, this one included (as of the last round)."""
        return list(self._peers)

    def series(self) -> list[tuple[Labels, float]]:
        """This round's HA series (recorded with the storage series every evaluation round), which
        the default rules ``PeerReplicaMissing`` and ``HADatabaseFailing`` read."""
        return [(Labels.of(catalog.HA_REPLICAS_KNOWN.name), float(len(self._peers))),
                (Labels.of(catalog.HA_REPLICAS_READY.name), float(sum(p.ready for p in self._peers))),
                (Labels.of(catalog.HA_LEADER.name), 1.0 if self.is_leader() else 0.0),
                (Labels.of(catalog.HA_DATABASE_FAILING.name), 0.0 if self.down_since is None else 1.0)]

    def cluster_status(self) -> dict[str, Any]:
        """Alertmanager's ``ClusterStatus`` (``/api/v2/status``): this replica, the peers seen lately."""
        return {"name": self.name, "status": "ready" if self.down_since is None else "settling",
                "peers": [{"name": p.name, "address": p.address} for p in self._peers if p.ready]}

    def overview(self) -> dict[str, Any]:
        """The pair as this replica sees it (``GET /api/v1/ha``, the dashboard's Replicas page): each
        replica, who leads, the lease, the database, the journal not yet written back."""
        now, held = self.clock.now(), self._holder
        lease = None if held is None else {
            "holder": held.holder, "expires_in": round(held.expires - now, 3),
            "age_seconds": round(now - (held.expires - self.lease.duration), 3)}  # since its last renewal
        replicas = [{"name": p.name, "address": p.address, "leader": p.leader, "ready": p.ready,
                     "self": p.name == self.name, "last_seen": p.seen, "age_seconds": round(now - p.seen, 3)}
                    for p in self._peers]
        down = self.down_since is not None or not self._db.up
        return {"enabled": True, "now": now, "replica": self.name, "delivering": self.is_leader(),
                "lease_seconds": self.lease.duration, "lease": lease, "replicas": replicas,
                "database": {"url": self._db.path, "state": "down" if down else "up",
                             "down_since": self.down_since, "error": self._db.last_error if down else ""},
                "journal": {"pending": self._db.journal.pending()}}

    def start(self) -> None:
        """Run ``step`` on a thread until ``stop``."""
        self._thread = threading.Thread(target=self._run, name="ha-replica", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step(self.clock.now())
            except Exception:  # the loop goes on: a bad round is logged, the next one tries again
                log.exception("replica round failed")
            self.clock.wait(self._stop, self.interval)

    def stop(self) -> None:
        """Stop the loop and give the lease up, so the peer takes over at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10.0)
        if self._leader:
            try:
                self.lease.release()
            except StoreError as exc:
                log.warning("replica %s could not give the lease up: %s", self.name, exc)
            self._leader = False


class SoleReplica:
    """No HA pair: this one process always delivers (``is_leader()`` is always true)."""

    def is_leader(self) -> bool:
        """Always true."""
        return True
