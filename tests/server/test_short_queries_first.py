"""Issue 46: a short query (a dashboard panel) does not share the interpreter with heavy ones.

Among API queries the one that has used the least CPU goes first: a query is short from its
start on a worker until it has used ``Priority.short_cpu`` or its answer is sent, and a longer
query waits at its checks while a short one runs.
"""

from __future__ import annotations

import threading

from starlette.testclient import TestClient

from inferwatch.config import QueryLimits, parse_config
from inferwatch.model import Labels, Priority, Sample, ShortTicket, SimulatedClock, pinned
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.api._query_exec import QueryContext, QueryExecutor
from inferwatch.store import MemoryStore

WAIT = 60.0  # generous bound: each wait returns as soon as its condition holds


class CountingPriority(Priority):
    """A priority that counts the short tickets it gave."""

    tickets = 0

    def short(self) -> ShortTicket:
        self.tickets += 1
        return super().short()


def _long_check(ctx: QueryContext) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run() -> None:
        ctx.check()
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, done


def test_a_long_query_makes_way_while_a_short_one_runs() -> None:
    # rule: past short_cpu a query waits at its next check while a ticket is held, and goes on
    # as soon as the last one is left
    p = Priority(short_cpu=0.02, short_wait=WAIT)
    ticket = p.short()
    p.make_way(0.01)  # still short itself: returns at once (a wait would hang the test)
    done = threading.Event()

    def long_query() -> None:
        p.make_way(0.5)
        done.set()

    t = threading.Thread(target=long_query, daemon=True)
    t.start()
    assert not done.wait(0.2)  # still waiting (a wait that ends early fails this assert)
    ticket.leave()
    assert done.wait(WAIT)
    t.join(WAIT)
    assert p.waited_s > 0


def test_leaving_twice_is_leaving_once_and_a_pinned_thread_never_waits() -> None:
    p = Priority(short_wait=WAIT)
    a, b = p.short(), p.short()
    a.leave()
    a.leave()  # must not count b's place away
    assert b.held and not a.held
    with pinned():
        p.make_way(1.0)  # inside a store lock (a short query may need it): at once
    b.leave()
    p.make_way(1.0)  # no short query left: at once
    assert p.waited_s == 0.0


def test_a_short_query_stuck_holds_the_others_back_for_short_wait_only() -> None:
    p = Priority(short_wait=0.05)
    ticket = p.short()
    p.make_way(1.0)  # returns after 0.05 s although the ticket is still held
    assert ticket.held and p.waited_s > 0


def test_the_query_context_is_short_until_it_has_used_its_share() -> None:
    # rule: begin() takes the ticket; the check that sees short_cpu used gives it up, and from then
    # on that query makes way for newer short ones
    p = Priority(short_cpu=0.02, short_wait=WAIT)
    cpu = {"heavy": 0.0, "panel": 0.0}
    heavy = QueryContext(120.0, 1000, priority=p, cpu=lambda: cpu["heavy"])
    panel = QueryContext(120.0, 1000, priority=p, cpu=lambda: cpu["panel"])
    heavy.begin()
    panel.begin()
    heavy.check()  # both short: nobody waits
    assert p.waited_s == 0.0
    cpu["heavy"] = 0.5
    t, done = _long_check(heavy)  # gives its own ticket up, then waits for the panel
    assert not done.wait(0.2)
    panel.check()  # the panel itself never waits for the heavy one
    panel.finish()
    assert done.wait(WAIT)
    t.join(WAIT)
    heavy.check()  # no short query left: at once
    heavy.finish()  # its ticket is already gone: nothing to leave


def test_an_answer_gives_the_short_place_up_once_sent_even_an_error() -> None:
    # rule: the ticket lasts until the answer is sent (a longer query resuming between the worker's
    # end and the send would make the panel wait for the interpreter again), and never longer
    clock = SimulatedClock(1000.0)
    store = MemoryStore()
    store.append([Sample(Labels.of("up", job="a"), t, 1.0) for t in (940.0, 970.0, 1000.0)])
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                    clock=clock)
    p = CountingPriority(short_cpu=10.0, short_wait=WAIT)  # every query here stays short to its end
    executor = QueryExecutor(QueryLimits(timeout=30), priority=p)
    try:
        with TestClient(create_app(server, executor=executor), raise_server_exceptions=False) as c:
            ok = c.get("/api/v1/query_range", params={"query": "up", "start": 940, "end": 1000, "step": 30})
            bad = c.get("/api/v1/query_range", params={"query": "up", "start": 940, "end": 1000, "step": 0})
            assert ok.status_code == 200 and ok.json()["data"]["result"][0]["values"][-1] == [1000, "1"]
            assert ok.headers["content-type"] == "application/json"
            assert bad.status_code == 400 and bad.json()["errorType"] == "bad_data"
        assert p.tickets == 2  # both took a ticket on their worker
        p.make_way(1.0)  # and both gave it up: this returns at once
        assert p.waited_s == 0.0
    finally:
        executor.close()
        server.stop()


def test_serve_hands_the_interpreter_over_every_millisecond() -> None:
    # rule: serve's switch interval is 1 ms (Python's 5 ms spread a panel's few milliseconds of work
    # over 15-20 ms of waits beside heavy queries)
    import sys

    from inferwatch.server._serve import SWITCH_INTERVAL_S, _tune_switching

    before = sys.getswitchinterval()
    try:
        _tune_switching()
        assert sys.getswitchinterval() == SWITCH_INTERVAL_S == 0.001
    finally:
        sys.setswitchinterval(before)


def test_a_query_queued_for_a_worker_takes_its_place_only_on_the_worker() -> None:
    # rule: with a worker free the ticket is taken as the query is handed over (longer queries make way
    # while the worker wakes); with every worker busy only once a worker runs it (longer queries must
    # not wait idle for a query that is itself waiting for one of them)
    import asyncio

    p = CountingPriority(short_wait=WAIT)
    executor = QueryExecutor(QueryLimits(timeout=30, max_concurrency=1), priority=p)
    release = threading.Event()

    async def both() -> list[int]:
        first = asyncio.ensure_future(executor.run(lambda ctx: release.wait(WAIT)))
        await asyncio.sleep(0)  # the first is handed to the one worker
        second = asyncio.ensure_future(executor.run(lambda ctx: p.tickets))
        await asyncio.sleep(0)  # the second waits in the queue
        queued = p.tickets
        release.set()
        return [queued, await second, int(await first)]

    try:
        assert asyncio.run(both()) == [1, 2, 1]  # the second's ticket came with its worker
    finally:
        executor.close()
