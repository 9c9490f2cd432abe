"""The action ledger: every run of an action, claimed before it runs, in SQLite (typed, no SQL elsewhere)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from inferwatch.alerting._state import StateStore
from inferwatch.model import readable

__all__ = ["DEDUPLICATED", "ActionLedger", "ActionRecord"]

EpisodeKey = tuple[str, str, float]  # (action, alert fingerprint, the episode's starts_at)


DEDUPLICATED = "deduplicated:"  # the outcome prefix of an episode a run for the same target covered


@dataclass(frozen=True, slots=True)
class ActionRecord:
    """One recorded run (or claim) of an action for an alert's firing episode."""

    t: float
    action: str
    alertname: str
    labels: dict[str, str]
    phase: str
    outcome: str
    ok: bool

    @property
    def deduplicated(self) -> bool:
        """Recorded, not run: another alert's run for the same target covered it."""
        return self.outcome.startswith(DEDUPLICATED)

    def to_json(self) -> dict[str, object]:
        """The API / replay shape."""
        return {"t": self.t, "action": self.action, "alertname": self.alertname, "labels": self.labels,
                "phase": self.phase, "outcome": self.outcome, "ok": self.ok}


class ActionLedger:
    """The ``actions`` table.

    >>> from inferwatch.alerting import StateDB
    >>> led = ActionLedger(StateDB(":memory:"))
    >>> led.claim(("scale", "fp", 0.0), "fire", "Down", {"service": "a"}, 5.0)
    True
    >>> led.claim(("scale", "fp", 0.0), "fire", "Down", {"service": "a"}, 6.0)
    False
    """

    def __init__(self, db: StateStore) -> None:
        self._db = db

    def get(self, key: EpisodeKey, phase: str) -> tuple[bool, str] | None:
        """``(ok, outcome)`` of the episode's run in ``phase``, or ``None`` if never claimed."""
        rows = self._db.query("SELECT ok, outcome FROM actions WHERE action=? AND fingerprint=? "
                              "AND episode=? AND phase=?", (*key, phase))
        return (bool(rows[0][0]), str(rows[0][1])) if rows else None

    def claim(self, key: EpisodeKey, phase: str, alertname: str, labels: Mapping[str, str],
              now: float) -> bool:
        """Write a ``running`` row; ``False`` if the episode's phase was claimed before."""
        with self._db.transaction() as c:
            cur = c.execute("INSERT OR IGNORE INTO actions VALUES (?,?,?,?,?,?,?,?,?)",
                            (*key, alertname, json.dumps(dict(labels)), phase, "running", 0, now))
            return bool(cur.rowcount == 1)

    def finish(self, key: EpisodeKey, phase: str, outcome: str, ok: bool) -> None:
        """Record the outcome of a claimed run."""
        with self._db.transaction() as c:
            c.execute("UPDATE actions SET outcome=?, ok=? WHERE action=? AND fingerprint=? AND episode=? "
                      "AND phase=?", (outcome, int(ok), *key, phase))

    def forget(self, key: EpisodeKey, phase: str) -> None:
        """Drop a claim that turned out to have nothing to do."""
        with self._db.transaction() as c:
            c.execute("DELETE FROM actions WHERE action=? AND fingerprint=? AND episode=? AND phase=?",
                      (*key, phase))

    def fired_since(self, action: str, since: float, exclude_prefix: str) -> list[ActionRecord]:
        """Successful ``fire`` runs of ``action`` at or after ``since``, newest first."""
        rows = self._db.query(
            "SELECT t, action, alertname, labels, phase, outcome, ok FROM actions WHERE action=? "
            "AND phase='fire' AND ok=1 AND t >= ? AND outcome NOT LIKE ? ORDER BY t DESC",
            (action, since, exclude_prefix + "%"))
        return [_row(r) for r in rows]

    def rows(self, limit: int = 1000) -> list[ActionRecord]:
        """Recorded runs, oldest first."""
        rows = self._db.query("SELECT t, action, alertname, labels, phase, outcome, ok FROM actions "
                              "ORDER BY t, rowid LIMIT ?", (limit,))
        return [_row(r) for r in rows]


def _row(r: tuple[object, ...]) -> ActionRecord:
    t, a, n, lb, p, o, ok = r
    labels = readable(json.loads(str(lb)))
    return ActionRecord(float(str(t)), str(a), str(n), labels, str(p), str(o), bool(ok))
