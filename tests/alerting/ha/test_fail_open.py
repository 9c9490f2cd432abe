"""The shared database gone: each replica delivers on its own, keeps a journal, writes it back.

Two pipelines over one PostgreSQL on simulated time; the cluster is stopped (``pg_ctl
-m immediate``) in the middle of a P0 escalation and started again.
"""

from __future__ import annotations

from collections.abc import Iterator

import psycopg
import pytest
from tests._postgres import PostgresCluster

from alerting.conftest import alert
from alerting.ha.test_shared_state import LEASE, pair
from alerting.test_oncall import steps
from inferwatch.alerting.mute import Silence
from inferwatch.model import Matcher, MatchOp


@pytest.fixture
def outage(postgres: PostgresCluster) -> Iterator[PostgresCluster]:
    yield postgres
    if not postgres.running():
        postgres.start()  # the next test finds it up, whatever happened here


def test_with_the_database_down_pages_go_out_and_nothing_is_lost(outage: PostgresCluster) -> None:
    url = outage.new_database()
    (a, ra, recs_a), (b, rb, recs_b) = pair(url)

    def round_(t: float) -> None:
        ra.clock.set(t)  # the pair's one simulated clock
        for p in (a, b):
            p.send([alert("Down", tier="P0")], now=t)
            p.tick(t)
        ra.step(t)
        rb.step(t)

    for t in range(0, 60, 10):
        round_(float(t))
    assert steps(recs_a) == [("phone", 1)] and steps(recs_b) == []
    outage.stop()
    for t in range(60, 400, 10):  # past the lease both deliver (fail open): step 2 at 5m is not lost
        round_(float(t))
    assert ra.down_since == 60.0 and ra.series()[-1][1] == 1.0  # HADatabaseFailing reads it
    assert ("second", 2) in steps(recs_a) + steps(recs_b)
    assert rb.is_leader() and ra.is_leader()
    # what people did meanwhile, through either replica
    quiet = (Matcher("alertname", MatchOp.EQ, "Quiet"),)
    a.silences.add(Silence("s-outage", quiet, 400.0, 4000.0, "ops", "during the outage"), 400.0)
    b.acknowledge(400.0, "bob", matchers=[Matcher("alertname", MatchOp.EQ, "Down")])
    outage.start()
    round_(410.0)
    assert ra.down_since is None and rb.down_since is None
    assert (ra.is_leader(), rb.is_leader()) == (True, False)  # one sender again
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT id FROM silences").fetchall() == [("s-outage",)]
        assert conn.execute('SELECT "by" FROM acks').fetchall() == [("bob",)]
        kinds = {k for (k,) in conn.execute("SELECT kind FROM history WHERE t > 60 AND t <= 400")}
    assert {"acknowledged", "notified", "escalated"} <= kinds, kinds
    # acknowledged through B while apart: after the return A sends no more steps
    before = steps(recs_a)
    for t in range(420, 1500, 10):
        ra.clock.set(float(t))
        a.send([alert("Down", tier="P0")], now=float(t))
        a.tick(float(t))
        ra.step(float(t))
    assert steps(recs_a) == before
    assert LEASE < 60
