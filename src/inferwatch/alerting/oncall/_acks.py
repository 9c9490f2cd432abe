"""Acknowledgements: "I have it" for an alert group, kept in SQLite until the group resolves.

An acknowledgement stops the group's escalation steps and its repeats; new
alerts joining the group and its resolution are still sent. It ends by itself
when the group resolves (or at its expiry), so a new firing escalates again.
Groups are named to the outside by a short id (``group_id``) that links and
the API use, never by the route's internal key.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass

from inferwatch.alerting._state import StateStore

__all__ = ["Ack", "Acks", "group_id"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS acks (
  group_key TEXT PRIMARY KEY, by TEXT NOT NULL, comment TEXT NOT NULL, at REAL NOT NULL,
  expires_at REAL)"""


def group_id(group_key: str) -> str:
    """The short public id of an aggregation group."""
    return hashlib.sha256(group_key.encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Ack:
    """One acknowledgement of one group."""

    group_key: str
    by: str
    comment: str
    at: float
    expires_at: float | None = None

    def active(self, now: float) -> bool:
        """Whether it still holds at ``now`` (before its expiry)."""
        return self.expires_at is None or now < self.expires_at

    def note(self) -> str:
        """The follow-up line every channel that carried the page is sent."""
        return f"Acknowledged by {self.by}" + (f": {self.comment}" if self.comment else "")

    def to_json(self) -> dict[str, object]:
        """The API shape."""
        return {"group_id": group_id(self.group_key), "by": self.by, "comment": self.comment,
                "at": self.at, "expires_at": self.expires_at}


def _opt(value: object) -> float | None:
    return None if value is None else float(str(value))


class Acks:
    """The ``acks`` table with an in-memory copy; safe from any thread."""

    def __init__(self, db: StateStore) -> None:
        self._db = db
        self._lock = threading.Lock()
        with db.transaction() as c:
            c.execute(_SCHEMA)
        self._cache: dict[str, Ack] = {}
        self.reload()

    def reload(self) -> None:
        """Read every acknowledgement again (an HA peer may have written some)."""
        rows = self._db.query("SELECT group_key, by, comment, at, expires_at FROM acks")
        cache = {str(k): Ack(str(k), str(b), str(cm), float(str(t)), _opt(e)) for k, b, cm, t, e in rows}
        with self._lock:
            self._cache = cache

    def add(self, ack: Ack) -> Ack:
        """Acknowledge (replacing an earlier acknowledgement of the same group)."""
        with self._db.transaction() as c:
            c.execute("INSERT OR REPLACE INTO acks VALUES (?,?,?,?,?)",
                      (ack.group_key, ack.by, ack.comment, ack.at, ack.expires_at))
        with self._lock:
            self._cache[ack.group_key] = ack
        return ack

    def remove(self, group_key: str) -> Ack | None:
        """End the acknowledgement of a group (unacknowledge, or the group resolved)."""
        with self._lock:
            old = self._cache.pop(group_key, None)
        if old is not None:
            with self._db.transaction() as c:
                c.execute("DELETE FROM acks WHERE group_key=?", (group_key,))
        return old

    def get(self, group_key: str, now: float) -> Ack | None:
        """The group's acknowledgement if it holds at ``now``."""
        with self._lock:
            ack = self._cache.get(group_key)
        return ack if ack is not None and ack.active(now) else None

    def list(self, now: float) -> list[Ack]:
        """Acknowledgements holding at ``now``, oldest first."""
        with self._lock:
            return sorted((a for a in self._cache.values() if a.active(now)), key=lambda a: a.at)
