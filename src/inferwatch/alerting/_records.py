"""What the pipeline did: notification records (sent or failed), kept for the API and replay."""

from __future__ import annotations

import collections
import json
import threading
from dataclasses import dataclass
from typing import Any

from inferwatch.alerting._notification import Notification
from inferwatch.alerting._state import StateStore
from inferwatch.model import readable

__all__ = ["NotificationRecord", "RecordLog"]


@dataclass(frozen=True, slots=True)
class NotificationRecord:
    """One delivery (``status`` ``sent``) or final failure (``failed``, with ``error``)."""

    t: float
    receiver: str
    kind: str
    status: str
    groups: tuple[dict[str, Any], ...]
    notes: tuple[str, ...] = ()
    error: str = ""
    escalation: str = ""
    step: int = 0

    @classmethod
    def of(cls, n: Notification, t: float, status: str, error: str = "") -> NotificationRecord:
        """Describe a notification (labels only; never a receiver's credentials)."""
        groups = tuple(
            {"group_key": g.key, "group_labels": g.labels.to_dict(),
             "alerts": [{"alertname": a.name, "labels": a.labels.to_dict(),
                         "status": "resolved" if a.resolved(g.now) else "firing"} for a in g.alerts]}
            for g in n.groups)
        return cls(t, n.receiver, n.kind, status, groups, n.notes, error, n.escalation, n.step)

    def to_json(self) -> dict[str, Any]:
        """The API shape."""
        return {"t": self.t, "receiver": self.receiver, "kind": self.kind, "status": self.status,
                "groups": list(self.groups), "notes": list(self.notes), "error": self.error,
                **self._step()}

    def _step(self) -> dict[str, Any]:
        return {"escalation": self.escalation, "step": self.step} if self.step else {}

    def entries(self) -> list[dict[str, Any]]:
        """One replay entry per group: ``t``, ``receiver``, ``group_labels``, ``alerts``."""
        return [{"t": self.t, "receiver": self.receiver, "group_labels": g["group_labels"],
                 "alerts": g["alerts"], **self._step(), **({"notes": list(self.notes)} if self.notes else {})}
                for g in self.groups]


class RecordLog:
    """The latest records in memory (bounded), every record also in SQLite (bounded)."""

    def __init__(self, db: StateStore, keep: int = 1000, keep_db: int = 10000) -> None:
        self._db = db
        self._keep_db = keep_db
        self._lock = threading.Lock()
        self._recent: collections.deque[NotificationRecord] = collections.deque(maxlen=keep)
        rows = db.query("SELECT body FROM notifications ORDER BY id DESC LIMIT ?", (keep,))
        for (body,) in reversed(rows):
            b = readable(json.loads(str(body)))
            self._recent.append(NotificationRecord(b["t"], b["receiver"], b["kind"], b["status"],
                                                   tuple(b["groups"]), tuple(b["notes"]), b["error"],
                                                   b.get("escalation", ""), b.get("step", 0)))

    def add(self, rec: NotificationRecord) -> None:
        """Keep a record."""
        with self._lock:
            self._recent.append(rec)
        with self._db.transaction() as c:
            cur = c.execute("INSERT INTO notifications (t, receiver, body) VALUES (?,?,?)",
                            (rec.t, rec.receiver, json.dumps(rec.to_json())))
            if cur.lastrowid and cur.lastrowid % 1000 == 0:
                c.execute("DELETE FROM notifications WHERE id <= ?", (cur.lastrowid - self._keep_db,))

    def recent(self) -> list[NotificationRecord]:
        """Oldest first."""
        with self._lock:
            return list(self._recent)
