"""The notification log: what each receiver was last sent for each group, in SQLite.

The dedup stage reads it so a flush, a retry or a restart never sends again
what was already delivered; the record stage writes it after delivery.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from inferwatch.alerting._state import StateStore

__all__ = ["NotificationLog", "NotifyEntry"]


@dataclass(frozen=True, slots=True)
class NotifyEntry:
    """The last successful notification of a group to a receiver."""

    firing: frozenset[str]
    resolved: frozenset[str]
    sent_at: float


class NotificationLog:
    """Read-through cache over the ``nflog`` table."""

    def __init__(self, db: StateStore) -> None:
        self._db = db
        self._cache: dict[tuple[str, str], NotifyEntry] = {}
        self.reload()

    def reload(self) -> None:
        """Read the log again (an HA peer that led before this replica wrote to it)."""
        self._cache = {(str(recv), str(key)): NotifyEntry(
            frozenset(json.loads(str(firing))), frozenset(json.loads(str(resolved))), float(str(sent)))
            for recv, key, firing, resolved, sent in self._db.query("SELECT * FROM nflog")}

    def get(self, receiver: str, group_key: str) -> NotifyEntry | None:
        """The last entry, or ``None`` if the group was never sent to this receiver."""
        return self._cache.get((receiver, group_key))

    def log(self, receiver: str, group_key: str, firing: frozenset[str], resolved: frozenset[str],
            now: float) -> None:
        """Record a delivered notification."""
        entry = NotifyEntry(firing, resolved, now)
        with self._db.transaction() as c:
            c.execute("INSERT OR REPLACE INTO nflog VALUES (?,?,?,?,?)",
                      (receiver, group_key, json.dumps(sorted(firing)), json.dumps(sorted(resolved)), now))
        self._cache[(receiver, group_key)] = entry

    def gc(self, before: float) -> int:
        """Forget entries with nothing firing sent before ``before``; return how many."""
        old = [k for k, e in self._cache.items() if not e.firing and e.sent_at < before]
        with self._db.transaction() as c:
            c.executemany("DELETE FROM nflog WHERE receiver=? AND group_key=?", old)
        for k in old:
            del self._cache[k]
        return len(old)
