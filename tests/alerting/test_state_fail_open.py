"""Issue 59: a lone server's alerting state fails open when its file refuses writes.

The pipeline runs on simulated time over ``FailOpenStateDB`` on a real file; the file is
made to refuse every write (``PRAGMA query_only``, as a read-only mount does: SQLite's
SQLITE_READONLY) or filled to a byte cap (``max_page_count``: SQLITE_FULL, as a full disk
does). The page still goes out, once; what it must remember is written back when the
file takes writes again, so a restart sends nothing twice.
"""

from __future__ import annotations

import logging
import random
import sqlite3
from pathlib import Path

import pytest

from alerting.conftest import alert
from inferwatch.alerting import Pipeline, RecordingNotifier
from inferwatch.alerting.ha import FailOpenStateDB
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock

PAGE = """
alerting:
  route: {receiver: ops, group_wait: 0s, group_interval: 1m, repeat_interval: 4h}
  receivers: [{name: ops, type: webhook, url: 'http://127.0.0.1:1/hook', send_resolved: true}]
"""


def _pipeline(path: Path) -> tuple[Pipeline, RecordingNotifier, FailOpenStateDB]:
    cfg = parse_config(PAGE).alerting
    rec = RecordingNotifier("ops")
    db = FailOpenStateDB(path)
    p = Pipeline(cfg, db=db, clock=SimulatedClock(0), notifiers={"ops": rec}, actions=[],
                 rng=random.Random(1))
    return p, rec, db


def _refuse(db: FailOpenStateDB, on: bool) -> None:
    db.conn.execute(f"PRAGMA query_only={'ON' if on else 'OFF'}")


def _statuses(rec: RecordingNotifier) -> list[str]:
    return [g.status for n in rec.sent for g in n.groups]


def _said(caplog: pytest.LogCaptureFixture, text: str) -> int:
    return sum(text in r.getMessage() for r in caplog.records)


def test_a_refused_write_still_pages_once_and_is_written_back(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "alerting.sqlite"
    p, rec, db = _pipeline(path)
    _refuse(db, True)
    with caplog.at_level(logging.WARNING, "inferwatch.alerting"):
        for t in range(0, 60, 10):  # the evaluator sends the firing alert every round
            p.send([alert("StorageWriteFailing", tier="P1")], now=float(t))
            p.tick(float(t))
        assert _statuses(rec) == ["firing"]  # delivered from memory, once
        assert db.journal is not None and db.pending() > 0 and db.held_total >= 6
        assert "read_only" in db.error
        assert _said(caplog, "cannot be written") == 1  # once per change of state, not per write
        assert not db.recover()  # still refused: stays in memory, says nothing more
        _refuse(db, False)  # the file takes writes again
        assert db.recover() and db.journal is None and db.pending() == 0
        assert _said(caplog, "is written to") == 1
        p.send([alert("StorageWriteFailing", tier="P1", end=70.0)], now=70.0)
        p.tick(70.0)
    assert _statuses(rec) == ["firing", "resolved"]
    with sqlite3.connect(path) as raw:  # the held writes are in the file: nothing owed, the sends logged
        assert raw.execute("SELECT count(*) FROM outbox").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM nflog").fetchone() == (1,)
    p.close()
    again, rec2, _ = _pipeline(path)  # a restart sends nothing twice
    for t in (80.0, 140.0, 300.0):
        again.tick(t)
    assert rec2.sent == []
    again.close()


def test_a_transaction_refused_midway_moves_whole(tmp_path: Path) -> None:
    # rule: a transaction the file refuses after some statements ran is done again in memory
    # with every statement, and the sends it owed start
    db = FailOpenStateDB(tmp_path / "alerting.sqlite")
    db.conn.execute("CREATE TABLE filler (x BLOB)")
    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db.conn.execute(f"PRAGMA max_page_count={pages + 2}")
    ran: list[str] = []
    with db.transaction() as c:
        c.execute("INSERT INTO meta VALUES ('k', 'v')")
        c.execute("INSERT INTO filler VALUES (zeroblob(65536))")  # past the cap: SQLITE_FULL
        db.after_commit(lambda: ran.append("send"))
    assert ran == ["send"] and "disk_full" in db.error
    assert db.query("SELECT value FROM meta WHERE key='k'") == [("v",)]  # read from memory
    db.conn.execute("PRAGMA max_page_count=1000000")  # space returns
    assert db.recover()
    with sqlite3.connect(tmp_path / "alerting.sqlite") as raw:
        assert raw.execute("SELECT value FROM meta").fetchall() == [("v",)]
        assert raw.execute("SELECT count(*) FROM filler").fetchone() == (1,)
    db.close()


def test_a_bad_statement_is_not_a_refused_file(tmp_path: Path) -> None:
    # rule: only the file's refusal fails open; a wrong statement raises as before
    db = FailOpenStateDB(tmp_path / "alerting.sqlite")
    with pytest.raises(sqlite3.OperationalError), db.transaction() as c:
        c.execute("INSERT INTO nowhere VALUES (1)")
    assert db.journal is None
    db.close()
