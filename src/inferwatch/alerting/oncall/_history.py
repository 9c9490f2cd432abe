"""The alert history: every event with its time, in SQLite, kept for a retention within a size bound.

Kinds: ``firing``, ``resolved`` (an alert), ``notified`` (a receiver, with its
outcome), ``escalated`` (a step), ``acknowledged``, ``unacknowledged``,
``silenced``, ``inhibited`` (an alert muted at a flush), ``action`` (an action's
outcome), ``answered`` and ``unanswered`` (a confirmed phone call: who answered,
or every round went unanswered). Each event carries the alert's or group's labels, so ``match[]``
selects by them, and MTTA / MTTR come from the same rows.
"""

from __future__ import annotations

import functools
import json
import statistics
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inferwatch.alerting._alertstore import labels_json
from inferwatch.alerting._state import StateStore
from inferwatch.model import Labels, Matcher, matches_all, readable

__all__ = ["EVENT_KINDS", "Event", "History"]

EVENT_KINDS = ("pending", "firing", "resolved", "notified", "escalated", "acknowledged", "unacknowledged",
               "silenced", "inhibited", "action", "answered", "unanswered")
PRUNE_EVERY = 500  # inserts between two retention sweeps
_SCHEMA = """CREATE TABLE IF NOT EXISTS history (
  id INTEGER PRIMARY KEY AUTOINCREMENT, t REAL NOT NULL, kind TEXT NOT NULL, group_id TEXT NOT NULL,
  fingerprint TEXT NOT NULL, labels TEXT NOT NULL, detail TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS history_t ON history (t)"""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened to an alert or a group."""

    t: float
    kind: str
    labels: Mapping[str, str]
    group_id: str = ""
    fingerprint: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The API shape."""
        return {"t": self.t, "kind": self.kind, "labels": dict(self.labels), "group_id": self.group_id,
                "fingerprint": self.fingerprint, **({"detail": dict(self.detail)} if self.detail else {})}


class History:
    """Append and query events; old ones go after ``retention`` seconds or beyond ``max_events``."""

    def __init__(self, db: StateStore, retention: float = 90 * 86400.0, max_events: int = 1_000_000) -> None:
        self._db, self.retention, self.max_events = db, retention, max_events
        self._lock = threading.Lock()
        self._since_prune = 0
        with db.transaction() as c:
            for stmt in _SCHEMA.split(";"):
                c.execute(stmt)

    def add(self, events: Sequence[Event]) -> None:
        """Store events (a write per batch; the sweep every ``PRUNE_EVERY`` events)."""
        if not events:
            return
        rows = [(e.t, e.kind, e.group_id, e.fingerprint, _labels_text(e.labels),
                 _detail_text(e.detail)) for e in events]
        with self._db.transaction() as c:
            c.executemany("INSERT INTO history (t, kind, group_id, fingerprint, labels, detail) "
                          "VALUES (?,?,?,?,?,?)", rows)
        with self._lock:
            self._since_prune += len(rows)
            due = self._since_prune >= PRUNE_EVERY
            if due:
                self._since_prune = 0
        if due:
            self.prune(max(e.t for e in events))

    def prune(self, now: float) -> int:
        """Drop events older than the retention and the oldest beyond ``max_events``; return how many."""
        with self._db.transaction() as c:
            n = c.execute("DELETE FROM history WHERE t < ?", (now - self.retention,)).rowcount
            n += c.execute("DELETE FROM history WHERE id <= (SELECT max(id) FROM history) - ?",
                           (self.max_events,)).rowcount
        return int(n)

    def query(self, matchers: Sequence[Sequence[Matcher]] = (), start: float = float("-inf"),
              end: float = float("inf"), kinds: Sequence[str] = (), group_id: str = "",
              limit: int = 10_000, fingerprints: Sequence[str] = ()) -> list[Event]:
        """Events from ``start`` to ``end`` (inclusive) whose labels match any of the matcher sets.

        ``group_id``: only that group's events, and those of its alerts' ``fingerprints``.
        """
        sql = "SELECT t, kind, group_id, fingerprint, labels, detail FROM history WHERE t >= ? AND t <= ?"
        params: list[object] = [max(start, -1e300), min(end, 1e300)]
        if kinds:
            sql += f" AND kind IN ({','.join('?' * len(kinds))})"
            params += list(kinds)
        if group_id:
            sql += f" AND (group_id = ? OR fingerprint IN ({','.join('?' * len(fingerprints))}))"
            params += [group_id, *fingerprints]
        out: list[Event] = []
        for t, kind, gid, fp, labels, detail in self._db.query(sql + " ORDER BY t, id", tuple(params)):
            lab = readable(json.loads(str(labels)))
            if matchers and not any(matches_all(ms, lab) for ms in matchers):
                continue
            info = readable(json.loads(str(detail)))
            out.append(Event(float(str(t)), str(kind), lab, str(gid), str(fp), info))
            if len(out) >= limit:
                break
        return out

    def count(self) -> int:
        """How many events are kept."""
        return int(str(self._db.query("SELECT count(*) FROM history")[0][0]))

    def response_times(self, start: float, end: float, by: Sequence[str] = ("service", "tier"),
                       ) -> list[dict[str, Any]]:
        """MTTA and MTTR per ``by`` labels over alerts that started firing from ``start`` to ``end``."""
        events = self.query(start=start, end=float("inf"), kinds=("firing", "resolved", "acknowledged"))
        firing: dict[str, Event] = {}
        tta: dict[tuple[str, ...], list[float]] = {}
        ttr: dict[tuple[str, ...], list[float]] = {}
        count: dict[tuple[str, ...], int] = {}
        acked: set[str] = set()
        for e in events:
            if e.kind == "firing" and e.t <= end and e.fingerprint not in firing:
                firing[e.fingerprint] = e
                count[_key(e, by)] = count.get(_key(e, by), 0) + 1
            elif e.kind == "acknowledged":
                for fp in e.detail.get("fingerprints", []):
                    if fp in firing and fp not in acked:
                        acked.add(fp)
                        tta.setdefault(_key(firing[fp], by), []).append(e.t - firing[fp].t)
            elif e.kind == "resolved" and e.fingerprint in firing:
                f = firing.pop(e.fingerprint)
                acked.discard(e.fingerprint)
                ttr.setdefault(_key(f, by), []).append(e.t - f.t)
        return [{**dict(zip(by, k, strict=True)), "alerts": n,
                 "acknowledged": len(tta.get(k, [])), "resolved": len(ttr.get(k, [])),
                 "mtta_seconds": statistics.fmean(tta[k]) if tta.get(k) else None,
                 "mttr_seconds": statistics.fmean(ttr[k]) if ttr.get(k) else None}
                for k, n in sorted(count.items())]


def _detail_text(detail: Mapping[str, Any]) -> str:
    if not detail:
        return "{}"
    try:  # a storm's firing events share their detail (the same starts_at)
        return _detail_json(tuple((k, type(v), v) for k, v in sorted(detail.items())))  # 1 is not True
    except TypeError:  # a list in it: not hashable
        return json.dumps(dict(detail), sort_keys=True)


@functools.lru_cache(maxsize=1024)
def _detail_json(items: tuple[tuple[str, type, Any], ...]) -> str:
    return json.dumps({k: v for k, _, v in items}, sort_keys=True)


def _labels_text(labels: Mapping[str, str]) -> str:
    return labels_json(labels) if type(labels) is Labels else json.dumps(dict(labels), sort_keys=True)


def _key(e: Event, by: Sequence[str]) -> tuple[str, ...]:
    return tuple(e.labels.get(n, "") for n in by)
