"""An HA pair from the config: the shared state in PostgreSQL and this replica's loop (``serve``'s wiring).

Without an ``ha`` section the state stays in ``alerting.sqlite`` (failing open into memory
while its disk refuses writes, as a replica does while its database is gone) and this
process always delivers (a :class:`~inferwatch.alerting.ha.SoleReplica`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from inferwatch._exceptions import ConfigError
from inferwatch.alerting._from_config import ALERTING_STATE_FILE
from inferwatch.alerting._pipeline import Pipeline
from inferwatch.alerting.ha._devices import SharedDevices
from inferwatch.alerting.ha._failopen import FailOpenStateDB
from inferwatch.alerting.ha._link import SharedLink
from inferwatch.alerting.ha._outcomes import SharedOutcomes
from inferwatch.alerting.ha._pg import PgStateDB
from inferwatch.alerting.ha._replica import Replica, SoleReplica
from inferwatch.model import Clock
from inferwatch.settings import BaseConfig

__all__ = ["JOURNAL_FILE", "Leadership", "open_replica", "shared_key", "shared_state", "shared_tables"]

JOURNAL_FILE = "ha-journal.sqlite"
"""Where a replica keeps what it wrote while the database was gone, until written back."""


class Leadership(Protocol):
    """Whether this process delivers now (the heartbeat sender asks it too)."""

    def is_leader(self) -> bool:
        """True while this replica holds the lease (always, without an HA pair)."""


def shared_state(config: BaseConfig, state: Path | None) -> PgStateDB | FailOpenStateDB | None:
    """Where the alerting state is kept: the pair's PostgreSQL (schema created or migrated now) with
    ``ha``; else ``state/alerting.sqlite``, failing open into memory while its disk refuses writes;
    ``None`` without a data directory (in memory).

    ``ConfigError`` when no URL is given; ``StoreError`` naming the URL without its password
    when the database cannot be reached or its schema is newer than this inferwatch. ``state``:
    the data directory, where the journal is kept (in memory without one).
    """
    if config.ha is None:
        return FailOpenStateDB(state / ALERTING_STATE_FILE) if state is not None else None
    try:
        url = config.ha.url()
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    return PgStateDB(url, journal=state / JOURNAL_FILE if state is not None else ":memory:")


def shared_key(db: PgStateDB, name: str, local: bytes) -> bytes:
    """The pair's key ``name`` (the acknowledgement links' signing key): stored once in the shared
    database by the first replica to start, with its own ``local`` key (the links it sent before the
    pair stay valid), and read from there by every replica, so a link made by A works on B.

    ``StoreError`` while the database is gone (at start: the pair cannot start without it anyway).
    """
    db.shared_write("INSERT INTO meta VALUES (?,?) ON CONFLICT (key) DO NOTHING",
                    (f"key:{name}", local.hex()))
    rows = db.shared_query("SELECT value FROM meta WHERE key=?", (f"key:{name}",))
    return bytes.fromhex(str(rows[0][0]))


def shared_tables(config: BaseConfig) -> tuple[SharedOutcomes, SharedDevices] | None:
    """An HA pair's delayed labels and edge device registry in its database, each on a connection of
    its own (``None`` without ``ha``). ``StoreError`` naming the URL when it cannot be reached."""
    if config.ha is None:
        return None
    return SharedOutcomes(SharedLink(config.ha.url())), SharedDevices(SharedLink(config.ha.url()))


def open_replica(config: BaseConfig, pipeline: Pipeline, clock: Clock) -> Replica | SoleReplica:
    """This replica (delivering only while it holds the lease), or a sole one without ``ha``."""
    if config.ha is None or not isinstance(pipeline.db, PgStateDB):
        return SoleReplica()
    replica = Replica(pipeline.db, pipeline, name=config.ha.replica_name(),
                      address=config.ha.address or config.server.listen, lease=config.ha.lease, clock=clock)
    pipeline.delivering = replica.is_leader
    return replica
