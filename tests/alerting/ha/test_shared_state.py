"""Two pipelines over one PostgreSQL, as two replicas of an HA pair run them, on simulated time.

The same on-call story as tests/alerting/test_oncall.py (escalation steps 0s, 5m, 15m),
with the state shared: a silence made on A mutes on B, an acknowledgement through B
stops A's escalation, and when A dies B takes over its escalation on time.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest

from alerting.conftest import alert
from alerting.test_oncall import make, run, steps
from inferwatch._exceptions import StoreError
from inferwatch.alerting import Pipeline, RecordingNotifier
from inferwatch.alerting.ha import PgStateDB, Replica
from inferwatch.alerting.mute import Silence
from inferwatch.config import Secret
from inferwatch.model import Matcher, MatchOp, SimulatedClock

LEASE = 15.0
_OPEN: list[Pipeline] = []


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().close()


def db(url: str) -> PgStateDB:
    return PgStateDB(Secret(url))


def pair(url: str) -> tuple[tuple[Pipeline, Replica, dict[str, RecordingNotifier]], ...]:
    clock = SimulatedClock(0)
    out = []
    for name in ("a", "b"):
        p, recs = make(db=db(url))
        _OPEN.append(p)
        p.clock = clock
        r = Replica(p.db, p, name=name, address=f"{name}:9464", lease=LEASE, clock=clock)
        p.delivering = r.is_leader
        out.append((p, r, recs))
    return tuple(out)


def test_the_stores_keep_the_same_story_on_postgresql(pg_url: str) -> None:
    # rule: one logic over two implementations: the steps on PostgreSQL are the steps on SQLite
    p, recs = make(db=db(pg_url))
    _OPEN.append(p)
    run(p, 1500)
    sqlite_p, sqlite_recs = make()
    run(sqlite_p, 1500)
    assert steps(recs) == steps(sqlite_recs) == [("phone", 1), ("second", 2), ("third", 3), ("third", 3)]
    assert p.oncall.history.count() == sqlite_p.oncall.history.count() > 0


def test_a_silence_on_a_mutes_on_b_and_an_ack_through_b_stops_a(pg_url: str) -> None:
    (a, ra, recs_a), (b, rb, recs_b) = pair(pg_url)
    ra.step(0.0)
    rb.step(0.0)
    assert (ra.is_leader(), rb.is_leader()) == (True, False)
    assert [(p.name, p.leader) for p in rb.peers()] == [("a", True), ("b", False)]
    # a silence made on A is in force on B after B's next round (each round is at most 1 s)
    muted = (Matcher("alertname", MatchOp.EQ, "Muted"),)
    s = a.silences.add(Silence("s1", muted, 0.0, 3600.0, "me", "x"), 0.0)
    assert b.silences.get(s.id) is None
    rb.step(0.5)
    b.send([alert("Muted", tier="P0")], now=1.0)
    assert [v.silenced_by for v in b.view(1.0)] == [("s1",)]
    # A leads the P0 escalation; B, following, records the alerts and sends nothing
    for t in range(0, 400, 10):
        for p in (a, b):
            p.send([alert("Down", tier="P0")], now=float(t))
            p.tick(float(t))
        ra.step(float(t))
        rb.step(float(t))
    assert steps(recs_a) == [("phone", 1), ("second", 2)] and steps(recs_b) == []
    # acknowledged through B: A's next round reads it, and step 3 (at 15m) never goes out
    b.acknowledge(400.0, "bob", gid="", matchers=[Matcher("alertname", MatchOp.EQ, "Down")])
    ra.step(400.5)
    for t in range(410, 1500, 10):
        a.send([alert("Down", tier="P0")], now=float(t))
        a.tick(float(t))
    assert steps(recs_a) == [("phone", 1), ("second", 2)]


def test_when_the_leader_dies_the_follower_continues_its_escalation_on_time(pg_url: str) -> None:
    (a, ra, recs_a), (b, rb, recs_b) = pair(pg_url)
    ra.step(0.0)
    rb.step(0.0)
    for t in range(0, 70, 10):  # one minute into the escalation: step 1 went out from A
        for p in (a, b):
            p.send([alert("Down", tier="P0")], now=float(t))
            p.tick(float(t))
        ra.step(float(t))
        rb.step(float(t))
    assert steps(recs_a) == [("phone", 1)]
    # A is killed at 60 s: it renews nothing more; B takes over once the lease ran out
    took, at = None, {}
    for t in range(70, 1000, 10):
        rb.clock.set(float(t))
        b.send([alert("Down", tier="P0")], now=float(t))
        rb.step(float(t))
        if took is None and rb.is_leader():
            took = float(t)
        b.tick(float(t))
        for step in steps(recs_b):
            at.setdefault(step, float(t))
    assert took is not None and took <= 60 + LEASE + 10
    # step 2 (5m) and step 3 (15m) came from B on time (ticks are 10 s apart); step 1 not again
    assert steps(recs_b) == [("second", 2), ("third", 3)] and steps(recs_a) == [("phone", 1)]
    assert at == {("second", 2): 300.0, ("third", 3): 900.0}
    # the history says which replica sent each message (A before the kill, B after the takeover;
    # besides the steps, the route's repeat_interval repeats from B)
    told = [(e.t < 60, e.detail.get("replica")) for e in b.oncall.history.query(kinds=("notified",))]
    assert told[0] == (True, "a") and set(told[1:]) == {(False, "b")}


def test_a_database_that_cannot_be_reached_is_named_without_its_password(postgres: object) -> None:
    with pytest.raises(StoreError) as err:
        PgStateDB(Secret("postgresql://iw:hunter2@127.0.0.1:1/iw"))
    text = str(err.value)
    assert "hunter2" not in text and "127.0.0.1:1/iw" in text and "cannot reach" in text


def test_a_schema_newer_than_the_code_is_refused_by_name(pg_url: str) -> None:
    db(pg_url).close()  # creates the schema, version 1
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    with pytest.raises(StoreError, match=r"schema version 99, newer than this inferwatch's 2"):
        PgStateDB(Secret(pg_url))
