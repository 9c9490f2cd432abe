"""What an HA pair shares beyond the alerting tables: the link key, who sent, heartbeats' last-seen times.

Two pipelines (or two heartbeat watches) over one PostgreSQL, as two replicas run them, on
simulated time.
"""

from __future__ import annotations

from tests._postgres import PostgresCluster

from alerting.conftest import alert
from alerting.ha.test_shared_state import _OPEN, db, pair
from alerting.test_oncall import make, steps
from inferwatch._exceptions import NotifyError
from inferwatch.alerting.deadman import HeartbeatWatch
from inferwatch.alerting.ha import Replica, shared_key
from inferwatch.alerting.oncall import group_id
from inferwatch.config import HeartbeatWatchSpec
from inferwatch.model import SimulatedClock
from inferwatch.rules import Alert


def _link_params(note: str) -> dict[str, str]:
    from urllib.parse import parse_qsl, urlsplit

    return dict(parse_qsl(urlsplit(note.removeprefix("Acknowledge: ")).query))


def test_a_link_made_by_a_acknowledges_on_b_and_each_message_names_its_sender(pg_url: str) -> None:
    # rule: the signing key is stored once (the first replica's own) and read by both
    dbs = (db(pg_url), db(pg_url))
    keys = [shared_key(d, "ack", own) for d, own in zip(dbs, (b"a" * 32, b"b" * 32), strict=True)]
    for d in dbs:
        d.close()
    assert keys == [b"a" * 32, b"a" * 32]
    clock = SimulatedClock(0)
    (a, recs_a), (b, recs_b) = (make(db=db(pg_url), key=k, url="https://iw.example.com") for k in keys)
    replicas = []
    for name, p in (("a", a), ("b", b)):
        _OPEN.append(p)
        p.clock = clock
        r = Replica(p.db, p, name=name, address=f"{name}:9464", lease=15.0, clock=clock)
        p.delivering = r.is_leader
        r.step(0.0)
        replicas.append(r)
    for p in (a, b):
        p.send([alert("Down", tier="P0")], now=0.0)
        p.tick(0.0)
    (page,) = recs_a["phone"].sent
    assert steps(recs_b) == [] and page.sender == "a"  # the footer each channel renders from it
    (note,) = [x for x in page.notes if x.startswith("Acknowledge: ")]
    key = page.groups[0].key
    # the link A sent verifies on B (the same key; the episode as B's next round reads it)
    replicas[1].step(1.0)
    assert b.ack_links.verify(_link_params(note), {group_id(key): key}, 10.0) == key


def test_a_heartbeat_heard_by_either_replica_counts_on_both(pg_url: str) -> None:
    # rule: HeartbeatMissing fires on neither replica while the pings reach only one of them
    spec = HeartbeatWatchSpec(name="site-b", expect_every=60, missing_after=180)
    sent: dict[str, list[Alert]] = {"a": [], "b": []}
    watches = {n: HeartbeatWatch([spec], SimulatedClock(0.0), lambda al, now, n=n: sent[n].extend(al),
                                 start=0.0, shared=db(pg_url)) for n in ("a", "b")}
    for t in range(0, 600, 60):  # the pings go to A only
        watches["a"].beat("site-b", float(t))
        for w in watches.values():
            w.check(float(t) + 30)
    assert sent == {"a": [], "b": []} and watches["b"].states["site-b"].last == 540.0
    # then they stop: both see it missing 180 s after the last one (the leader's page is the one sent)
    for w in watches.values():
        assert [x.labels["alertname"] for x in w.check(721.0)] == ["HeartbeatMissing"]
    # back, at B only: A learns of it and resolves too
    watches["b"].beat("site-b", 800.0)
    assert watches["a"].check(801.0) == [] and [x.ends_at for x in sent["a"] if x.ends_at] == [801.0]
    for d in {id(w._shared): w._shared for w in watches.values()}.values():
        assert d is not None
        d.close()


def test_a_follower_failing_open_sends_what_the_leader_still_owed(postgres: PostgresCluster) -> None:
    # rule: a follower keeps the leader's pending outbox (read when it changes), so when the database
    # goes away it delivers what the leader had queued but not sent, not only what it makes itself
    (a, ra, recs_a), (b, rb, recs_b) = pair(postgres.new_database())
    ra.step(0.0)
    rb.step(0.0)
    recs_a["phone"].fail_next(*[NotifyError("HTTP 503", retryable=True)] * 20)  # A's page waits to retry
    for p in (a, b):
        p.send([alert("Down", tier="P0")], now=0.0)
    a.tick(0.0)
    rb.step(0.5)
    assert recs_a["phone"].sent == [] and [e.n.step for e in b.outbox.entries("phone")] == [1]
    postgres.stop()
    try:
        for t in range(10, 60, 5):  # A is cut off too; B fails open a lease after it lost the database
            rb.clock.set(float(t))
            rb.step(float(t))
            b.tick(float(t))
    finally:
        postgres.start()
    # the step A owed goes out from B (beside B's own update of the group: duplicates accepted)
    assert ("p0", 1, "b") in [(n.escalation, n.step, n.sender) for n in recs_b["phone"].sent]
