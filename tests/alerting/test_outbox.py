"""The outbox: one waiting row per receiver and group set; what it owes survives a reopen."""

from __future__ import annotations

from pathlib import Path

from alerting.conftest import alert
from inferwatch.alerting import AlertGroup, Notification, StateDB
from inferwatch.alerting._outbox import Outbox
from inferwatch.model import Labels


def _n(*instances: str, receiver: str = "wecom", key: str = "g") -> Notification:
    alerts = tuple(alert(instance=i) for i in instances)
    return Notification(receiver, (AlertGroup(key, Labels({"alertname": "HighLatency"}), alerts, 0.0),))


def test_a_newer_flush_replaces_a_waiting_row_keeping_its_id_when_nothing_changed() -> None:
    # rule: same content -> same id and schedule; new content -> new id, due now, attempts reset
    box = Outbox(StateDB(":memory:"))
    first = box.put(_n("a"), 0.0)
    seq, nid = first.seq, first.n.id
    first.attempts, first.due = 2, 50.0
    same = box.put(_n("a"), 10.0)
    assert same.seq == seq and same.n.id == nid and same.due == 50.0 and len(box) == 1
    news = box.put(_n("a", "b"), 20.0)
    assert news.seq == seq and news.n.id != nid
    assert (news.attempts, news.due, len(box)) == (0, 20.0, 1)


def test_a_row_in_flight_is_never_replaced() -> None:
    # rule: a send in flight keeps its row; the newer flush waits in a second one
    box = Outbox(StateDB(":memory:"))
    flying = box.put(_n("a"), 0.0)
    later = box.put(_n("a", "b"), 1.0, busy={flying.seq})
    assert later.seq != flying.seq and [e.seq for e in box.entries("wecom")] == [flying.seq, later.seq]


def test_rows_survive_a_reopen_and_the_newest_of_a_group_wins(tmp_path: Path) -> None:
    # rule: after a crash with a row in flight and a newer one waiting, only the newer is owed;
    # ids, attempts, due times and each group's idempotency key come back as they were
    db = StateDB(tmp_path / "a.sqlite")
    box = Outbox(db)
    flying = box.put(_n("a"), 0.0)
    newer = box.put(_n("a", "b"), 1.0, busy={flying.seq})
    other = box.put(_n("x", receiver="phone", key="h"), 2.0)
    other.attempts, other.due, other.error = 3, 99.0, "HTTP 503"
    box.update([other])
    db.close()
    again = Outbox(StateDB(tmp_path / "a.sqlite"))
    (w,) = again.entries("wecom")
    (p,) = again.entries("phone")
    assert (w.seq, w.n.id, len(w.n.alerts)) == (newer.seq, newer.n.id, 2)
    assert (p.attempts, p.due, p.error, p.n.id) == (3, 99.0, "HTTP 503", other.n.id)
    assert p.n.groups[0].idempotency_key == other.n.groups[0].idempotency_key != ""
    again.remove([w.seq, p.seq])
    assert len(again) == 0 and len(Outbox(StateDB(tmp_path / "a.sqlite"))) == 0
