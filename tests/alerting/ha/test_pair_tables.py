"""What an HA pair shares outside the alerting state, and the lease with the replicas' clocks apart.

Delayed labels posted to either replica are polled from either, numbered in commit order
(a poller's cursor never passes a number whose rows have not committed); an edge device
heard by one replica is known to the other; the lease holds with the replicas' clocks a
minute apart. Over the session's real PostgreSQL, in process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import psycopg
import pytest

from alerting.ha.conftest import poll
from alerting.ha.test_shared_state import db
from inferwatch.alerting.ha import (
    MIGRATIONS,
    Lease,
    SharedDevices,
    SharedLink,
    SharedOutcomes,
    schema_version,
)
from inferwatch.config import EdgeConfig, OutcomesConfig, Secret
from inferwatch.edge import Batch, encode_batch
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.server._outcome_store import Outcome, OutcomeStore
from inferwatch.server.ingest import EdgeIngest
from inferwatch.store import MemoryStore

T0 = 1.7e9
_CLOSE: list[OutcomeStore | EdgeIngest] = []


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    while _CLOSE:
        _CLOSE.pop().close()


@pytest.fixture
def url(pg_url: str) -> str:
    """A fresh database with the pair's schema (a replica's first start creates it)."""
    db(pg_url).close()
    return pg_url


def outcomes(url: str, clock: SimulatedClock, **cfg: object) -> OutcomeStore:
    store = OutcomeStore(None, clock, OutcomesConfig(**cfg), shared=SharedOutcomes(SharedLink(Secret(url))))
    _CLOSE.append(store)
    return store


def test_lease_holds_with_the_replicas_clocks_a_minute_apart(pg_url: str) -> None:
    # rule: expiry is judged on one clock only (the follower's, from when it saw the last renewal):
    # with A's clock a minute behind B's, B never takes the lease while A renews, and takes it a
    # lease (on its own clock) after A's last renewal
    d = db(pg_url)
    a, b = Lease(d, "a", 15.0), Lease(d, "b", 15.0)
    both = []
    for t in range(0, 120):  # rounds a second apart; A's clock reads t - 60, B's t
        both.append((a.renew(t - 60.0), b.renew(float(t))))
    assert set(both) == {(True, False)}
    took = next(t for t in range(120, 200) if b.renew(float(t)))  # A is killed after its round at 119
    assert 119 + 15 <= took <= 119 + 15 + 1
    assert not a.renew(took - 60.0 + 1)  # A, back, finds the lease taken
    # and the other way round: B's clock a minute behind A's, A does not take it early either
    both = [(b.renew(float(t)), a.renew(t + 60.0))[::-1] for t in range(took + 1, took + 60)]
    assert set(both) == {(False, True)}
    d.close()


def test_outcomes_posted_to_a_are_polled_from_b_each_once(url: str) -> None:
    clock = SimulatedClock(T0)
    a, b = outcomes(url, clock), outcomes(url, clock)
    assert a.epoch == b.epoch  # one sequence for the pair
    assert a.add([Outcome("r1", 1, "ctr"), Outcome("r2", 0, "ctr"), Outcome("r1", 1, "ctr")]) == (1, 2)
    assert b.add([Outcome("r2", 0, "ctr"), Outcome("r3", "cat")]) == (3, 3)  # r2 retried on B: once
    page = b.after(0, 10, model="ctr")
    assert [(o.seq, o.request_id, o.label) for o in page.outcomes] == [
        (1, "r1", 1), (2, "r2", 0), (3, "r3", "cat")]
    assert (page.next, page.last, b.rows) == (3, 3, 3)
    assert a.after(3, 10).outcomes == [] and a.after(1, 1).next == 2


def test_an_uncommitted_number_holds_the_pollers_back_and_the_writers_take_turns(url: str) -> None:
    # rule: the cursor over two writers never skips a row committed late; with a BIGSERIAL, B's 2
    # could commit before A's 1 and a poller at 2 would never see 1
    clock = SimulatedClock(T0)
    b, poller = outcomes(url, clock), outcomes(url, clock)
    with psycopg.connect(url, autocommit=True) as other:
        with other.transaction():  # a writer on A mid-way: its number 1 taken, not committed yet
            other.execute("SELECT last FROM outcomes_meta FOR UPDATE")
            other.execute("INSERT INTO outcomes VALUES (1, 'late', '1', '', NULL, %s)", (T0,))
            done = threading.Event()
            threading.Thread(target=lambda: (b.add([Outcome("early", 0)]), done.set()), daemon=True).start()
            waiting = ("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                       "AND datname = current_database()")
            assert poll(lambda: other.execute(waiting).fetchone()[0] == 1)  # B's write waits its turn
            page = poller.after(0, 10)
            assert (page.outcomes, page.next) == ([], 0)  # nothing the cursor could pass
            other.execute("UPDATE outcomes_meta SET last = 1, kept = 1")
        assert done.wait(60)
    page = poller.after(0, 10)
    assert [(o.seq, o.request_id) for o in page.outcomes] == [(1, "late"), (2, "early")] and page.next == 2


def test_concurrent_writers_on_both_replicas_are_polled_without_a_gap(url: str) -> None:
    clock = SimulatedClock(T0)
    writers, poller = [outcomes(url, clock) for _ in range(2)], outcomes(url, clock)
    seen: list[int] = []
    cursor = 0

    def write(w: OutcomeStore, name: str) -> None:
        for i in range(40):
            w.add([Outcome(f"{name}-{i}-{k}", k) for k in range(5)])

    threads = [threading.Thread(target=write, args=(w, n)) for w, n in zip(writers, "ab", strict=True)]
    for th in threads:
        th.start()
    while True:  # a poller reading while both write, in pages smaller than a write
        done = not any(th.is_alive() for th in threads)
        page = poller.after(cursor, 7)
        seen += [o.seq for o in page.outcomes]
        cursor = page.next
        if done and page.next == page.last:
            break
    assert seen == list(range(1, 401))


def test_outcomes_are_bounded_by_age_and_rows_in_the_shared_table(url: str) -> None:
    clock = SimulatedClock(T0)
    a = outcomes(url, clock, max_rows=3, retention=3600)
    a.add([Outcome(f"r{i}", i) for i in range(5)])
    assert (a.rows, a.dropped) == (3, {"age": 0, "rows": 2})
    clock.advance(7200)
    assert a.after(0, 10).outcomes == [] and (a.rows, a.dropped["age"]) == (0, 3)


def _edge(url: str, clock: SimulatedClock) -> EdgeIngest:
    edge = EdgeIngest(EdgeConfig(devices={"cam-1": Secret("cam-t0ken")}), MemoryStore(), clock, None)
    edge.shared = SharedDevices(SharedLink(Secret(url)))
    _CLOSE.append(edge)
    return edge


def test_a_device_heard_by_a_is_known_to_b_and_b_counts_only_what_it_stored(url: str) -> None:
    # rule: after a failover B pages for a device that went quiet, not for one that reported to A
    clock = SimulatedClock(T0)
    a, b = _edge(url, clock), _edge(url, clock)
    batch = Batch("cam-1", "s:1-2", (Sample(Labels.of("x"), T0 - 30, 1.0),), 300.0)
    assert a.ingest("Bearer cam-t0ken", encode_batch(batch))["status"] == "success"
    a.watch(T0)
    clock.advance(60)
    b.watch(clock.now())
    (row,) = b.fleet()
    assert (row["last_contact"], row["silence_s"], row["samples"]) == (T0, 60.0, 0)
    # the agent moves to B: A learns the newer contact, and its own count stays its own
    later = Batch("cam-1", "s:3-4", (Sample(Labels.of("x"), T0 + 45, 2.0),
                                     Sample(Labels.of("x"), T0 + 50, 3.0)), 300.0)
    assert b.ingest("Bearer cam-t0ken", encode_batch(later))["status"] == "success"
    b.watch(clock.now())
    a.watch(clock.now())
    (row,) = a.fleet()
    assert (row["last_contact"], row["silence_s"], row["samples"]) == (T0 + 60, 0.0, 1)


def test_devices_go_on_locally_while_the_database_is_gone(url: str) -> None:
    clock = SimulatedClock(T0)
    a = _edge(url, clock)
    a.shared = SharedDevices(SharedLink(Secret("postgresql://iw:hunter2@127.0.0.1:1/iw")))
    batch = Batch("cam-1", "s:1-2", (Sample(Labels.of("x"), T0 - 30, 1.0),), 300.0)
    assert a.ingest("Bearer cam-t0ken", encode_batch(batch))["status"] == "success"
    assert a.watch(T0) == 1 and a.fleet()[0]["last_contact"] == T0


def test_a_version_1_database_is_migrated_with_its_lease_kept(pg_url: str) -> None:
    # rule: a pair upgraded in place keeps its sender: the holder stays, its renewals count from 0
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for stmt in MIGRATIONS[0].split(";"):
            conn.execute(stmt)
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute("INSERT INTO lease VALUES ('sender', 'a', 0)")
    d = db(pg_url)
    try:
        with psycopg.connect(pg_url) as conn:
            assert schema_version(conn) == 2
        assert Lease(d, "a", 15.0).renew(T0) and not Lease(d, "b", 15.0).renew(T0)
        assert d.shared_query("SELECT epoch <> '', last FROM outcomes_meta") == [(True, 0)]
    finally:
        d.close()
