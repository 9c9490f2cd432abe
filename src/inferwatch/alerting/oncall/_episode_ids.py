"""Episode ids: one random id per firing episode of an alert group, kept until the group resolves.

Links signed for a group name its episode, so a link from an earlier firing of
the same group is refused once that firing resolved and a new one began.
"""

from __future__ import annotations

import secrets
import threading

from inferwatch.alerting._state import StateStore

__all__ = ["EpisodeIds"]

_SCHEMA = """CREATE TABLE IF NOT EXISTS group_episodes (
  group_key TEXT PRIMARY KEY, episode TEXT NOT NULL, started REAL NOT NULL)"""


class EpisodeIds:
    """The ``group_episodes`` table with an in-memory copy; safe from any thread."""

    def __init__(self, db: StateStore) -> None:
        self._db = db
        self._lock = threading.Lock()
        with db.transaction() as c:
            c.execute(_SCHEMA)
        self._ids: dict[str, tuple[str, float]] = {}
        self.reload()

    def reload(self) -> None:
        """Read the ids again (an HA peer may have started episodes)."""
        ids = {str(k): (str(e), float(str(t)))
               for k, e, t in self._db.query("SELECT group_key, episode, started FROM group_episodes")}
        with self._lock:
            self._ids = ids

    def current(self, group_key: str) -> str | None:
        """The id of the group's episode now, ``None`` between episodes."""
        with self._lock:
            found = self._ids.get(group_key)
        return found[0] if found is not None else None

    def begin(self, group_key: str, now: float) -> tuple[str, float]:
        """The id of the group's episode and when it began, starting one when none runs."""
        with self._lock:
            found = self._ids.get(group_key)
            if found is not None:
                return found
            episode = secrets.token_hex(8)
            with self._db.transaction() as c:
                c.execute("INSERT OR REPLACE INTO group_episodes VALUES (?,?,?)", (group_key, episode, now))
            self._ids[group_key] = (episode, now)
            return episode, now

    def end(self, group_key: str) -> None:
        """The group resolved: its episode is over (its links with it)."""
        with self._lock:
            if self._ids.pop(group_key, None) is None:
                return
            with self._db.transaction() as c:
                c.execute("DELETE FROM group_episodes WHERE group_key=?", (group_key,))
