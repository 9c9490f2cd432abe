"""The outbox: notifications owed to receivers, in SQLite, until delivered or given up.

A flush that passes dedup is put here before anything is sent; retries (with
their backoff) and rate-limit holds are rows here too, so a restart neither
loses a pending notification nor forgets its attempts. One row per receiver
and group set waits at a time: a newer flush of the same groups replaces a
waiting row (keeping its id when the content is the same), but never a row
whose send is in flight; a flush with the same content as a send in flight adds nothing
(a receiver slower than ``group_interval`` gets the page once, with one id).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from inferwatch.alerting._alertstore import alert_from_json, alert_text
from inferwatch.alerting._notification import AlertGroup, Notification, fingerprint
from inferwatch.alerting._state import StateStore
from inferwatch.model import Labels, readable

__all__ = ["Outbox", "OutboxEntry"]


@dataclass(slots=True)
class OutboxEntry:
    """One owed notification: its attempts so far and when the next one is due."""

    seq: int
    receiver: str
    key: str
    n: Notification
    attempts: int
    due: float
    created: float
    error: str = ""


def _key(n: Notification) -> str:
    step = f"#{n.escalation}/{n.step}" if n.step else ""  # a step is owed apart from the group's updates
    return n.kind + step + "|" + "\n".join(g.key for g in n.groups)


def _content(n: Notification) -> tuple[object, ...]:
    return tuple((g.key, frozenset(fingerprint(a) for a in g.firing()),
                  frozenset(fingerprint(a) for a in g.resolved())) for g in n.groups) + n.notes


def _to_json(n: Notification) -> str:
    # json.dumps of the whole, with each alert's text from its cached parts spliced in (a storm's hot path)
    groups = [json.dumps({"key": g.key, "labels": g.labels.to_dict(), "now": g.now,
                          "repeat_interval": None if g.repeat_interval == float("inf") else g.repeat_interval,
                          })[:-1] + ', "alerts": [' + ", ".join(map(alert_text, g.alerts)) + "]}"
              for g in n.groups]
    head = json.dumps({"receiver": n.receiver, "kind": n.kind, "id": n.id, "notes": list(n.notes),
                       "escalation": n.escalation, "step": n.step})
    return head[:-1] + ', "groups": [' + ", ".join(groups) + "]}"


def _from_json(text: str) -> Notification:
    b: dict[str, Any] = readable(json.loads(text))
    groups = tuple(
        AlertGroup(g["key"], Labels(g["labels"]), tuple(alert_from_json(a) for a in g["alerts"]),
                   float(g["now"]), float("inf") if g["repeat_interval"] is None else g["repeat_interval"])
        for g in b["groups"])
    n = Notification(b["receiver"], groups, tuple(b["notes"]), b["kind"],
                     escalation=str(b.get("escalation", "")), step=int(b.get("step", 0)))
    return _with_id(n, b["id"])


class Outbox:
    """The ``outbox`` table with an in-memory index; safe to call from one thread at a time."""

    def __init__(self, db: StateStore) -> None:
        self._db = db
        self._entries: dict[int, OutboxEntry] = {}
        self._by_receiver: dict[str, dict[int, OutboxEntry]] = {}
        self._by_key: dict[tuple[str, str], dict[int, OutboxEntry]] = {}
        self._seen: tuple[object, ...] = ()
        self.reload()

    def reload(self, *, changed_only: bool = False) -> None:
        """Read the rows again (at start, and when an HA replica takes over what its peer owed).

        ``changed_only``: only when the table changed since the last read (an HA follower, every
        round: it holds what the leader owes, should it have to fail open, for the price of one
        aggregate query while nothing changes)."""
        seen = tuple(self._db.query("SELECT count(*), max(seq), sum(attempts) FROM outbox")[0])
        if changed_only and seen == self._seen:
            return
        self._seen = seen
        self._entries, self._by_receiver, self._by_key = {}, {}, {}
        rows = self._db.query("SELECT seq, receiver, key, body, attempts, due, created, error FROM outbox "
                              "ORDER BY seq")
        newest: dict[tuple[str, str], int] = {}
        for seq, receiver, key, body, attempts, due, created, error in rows:
            e = OutboxEntry(int(str(seq)), str(receiver), str(key), _from_json(str(body)),
                            int(str(attempts)), float(str(due)), float(str(created)), str(error))
            self._add(e)
            newest[(e.receiver, e.key)] = e.seq
        # A row that was in flight at a crash and a newer one for the same groups: the newer wins.
        stale = [s for s, e in self._entries.items() if newest[(e.receiver, e.key)] != s]
        self.remove(stale)

    def put(self, n: Notification, now: float, busy: Collection[int] = ()) -> OutboxEntry:
        """Owe ``n`` (with an id); replaces a waiting row of the same groups unless it is ``busy``."""
        key = _key(n)
        rows = self._by_key.get((n.receiver, key), {}).values()
        old = next((e for e in rows if e.seq not in busy), None)
        if old is None:  # the same notification already being delivered: no second copy, no new id
            flying = next((e for e in rows if _content(e.n) == _content(n)), None)
            if flying is not None:
                return flying
        if old is not None:
            same = _content(old.n) == _content(n)
            old.n = _with_id(n, old.n.id if same else uuid.uuid4().hex)
            if not same:  # news: the first attempt of a new notification, not a retry
                old.attempts, old.due = 0, now
            self._write(old)
            return old
        n = _with_id(n, uuid.uuid4().hex)
        with self._db.transaction() as c:
            cur = c.execute("INSERT INTO outbox (id, receiver, key, body, attempts, due, created, error) "
                            "VALUES (?,?,?,?,?,?,?,?)", (n.id, n.receiver, key, _to_json(n), 0, now, now, ""))
            seq = int(cur.lastrowid or 0)
        e = OutboxEntry(seq, n.receiver, key, n, 0, now, now)
        self._add(e)
        return e

    def _add(self, e: OutboxEntry) -> None:
        self._entries[e.seq] = e
        self._by_receiver.setdefault(e.receiver, {})[e.seq] = e
        self._by_key.setdefault((e.receiver, e.key), {})[e.seq] = e

    def update(self, entries: Iterable[OutboxEntry]) -> None:
        """Write back attempts, due time and last error."""
        with self._db.transaction() as c:
            c.executemany("UPDATE outbox SET attempts=?, due=?, error=? WHERE seq=?",
                          [(e.attempts, e.due, e.error, e.seq) for e in entries])

    def _write(self, e: OutboxEntry) -> None:
        with self._db.transaction() as c:
            c.execute("UPDATE outbox SET id=?, body=?, attempts=?, due=?, error=? WHERE seq=?",
                      (e.n.id, _to_json(e.n), e.attempts, e.due, e.error, e.seq))

    def remove(self, seqs: Iterable[int]) -> None:
        """Delivered or given up: no longer owed."""
        seqs = [s for s in seqs if s in self._entries]
        with self._db.transaction() as c:
            c.executemany("DELETE FROM outbox WHERE seq=?", [(s,) for s in seqs])
        for s in seqs:
            e = self._entries.pop(s)
            del self._by_receiver[e.receiver][s]
            same = self._by_key[(e.receiver, e.key)]
            del same[s]
            if not same:
                del self._by_key[(e.receiver, e.key)]

    def entries(self, receiver: str) -> list[OutboxEntry]:
        """What ``receiver`` is owed, oldest first."""
        return list(self._by_receiver.get(receiver, {}).values())  # inserted in seq order

    def __len__(self) -> int:
        return len(self._entries)


def _with_id(n: Notification, nid: str) -> Notification:
    from dataclasses import replace

    groups = tuple(replace(g, idempotency_key=f"{nid}-{i}") for i, g in enumerate(n.groups))
    return replace(n, id=nid, groups=groups)
