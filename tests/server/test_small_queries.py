"""Issue 46: a small query is evaluated on the event loop, with the same answers and the same limits."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient
from tests.promql.compliance import (
    END,
    EXTRA_FAILING,
    EXTRA_QUERIES,
    START,
    STEP,
    demo_store,
    expand_cases,
    query_file,
)

from inferwatch.config import QueryLimits, parse_config
from inferwatch.model import Labels, Matcher, Sample, SimulatedClock
from inferwatch.promql import parse_promql
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.api import query_executor
from inferwatch.server.api._query_exec import QueryExecutor
from inferwatch.server.api._query_fork import QueryForks
from inferwatch.server.api._query_small import MAX_POINTS, run_if_small
from inferwatch.store import MemoryStore, Series

from ._proc import serve, wait_scraped
from .conftest import FakeTarget

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the small path comes with forked queries")


def _client(store: MemoryStore, executor: QueryExecutor, now: float) -> TestClient:
    clock = SimulatedClock(now)
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                    clock=clock)
    return TestClient(create_app(server, executor=executor), raise_server_exceptions=False)


@pytest.fixture(scope="module")
def apps() -> Iterator[tuple[QueryExecutor, TestClient, TestClient]]:
    """The demo data behind two apps: small queries on the event loop (``isolation: fork``), and none."""
    store = demo_store()
    here = query_executor(QueryLimits(isolation="fork", fork_nice=0))
    there = query_executor(QueryLimits(isolation="thread"))
    clients = [_client(store, ex, float(END)) for ex in (here, there)]
    yield here, clients[0], clients[1]
    for c in clients:
        c.close()


def test_answers_on_the_event_loop_are_byte_for_byte_a_workers(
        apps: tuple[QueryExecutor, TestClient, TestClient]) -> None:
    # rule: where a query runs changes nothing in its answer or its error (type, status, text)
    here, loop, worker = apps
    tester = [c.query for c in expand_cases()] if query_file() is not None else []
    cases = tester[::10] + EXTRA_QUERIES + EXTRA_FAILING + [
        "sum(demo_num_cpus) by (instance) * on(job) demo_num_cpus",  # many-to-many: an execution error
        "demo_num_cpus[5m]",  # a range vector in a range query: bad_data
        "sum(x",  # a parse error
    ]
    forms = [({"query": q, "start": str(START), "end": str(END), "step": str(STEP)}, "/api/v1/query_range")
             for q in cases]
    forms += [({"query": q, "time": str(END)}, "/api/v1/query") for q in [*EXTRA_QUERIES, "sum(x"]]
    before = here.ran_here
    for form, path in forms:
        a, b = loop.post(path, data=form), worker.post(path, data=form)
        assert (a.status_code, a.content) == (b.status_code, b.content), (path, form["query"])
    assert here.ran_here - before >= 0.5 * len(forms)  # not: parse errors, subqueries, the widest
    assert here.in_flight() == 0


class _Store:
    """What ``run_if_small`` looks at: the lock taken without waiting, and the index's count."""

    def __init__(self, matching: int, head_from: float = 0.0, busy: bool = False) -> None:
        self.matching, self.head_from, self.busy = matching, head_from, busy

    def held_if_free(self) -> object:
        import contextlib

        return contextlib.nullcontext(None if self.busy else self.head_from)

    def count_matching(self, matchers: Sequence[Matcher]) -> int:
        return self.matching


@pytest.mark.parametrize(("query", "store", "start", "small"), [
    # rule: a few series at a few steps, in the head, the lock free: here
    ('sum(rate(r{s="a"}[1m]))', _Store(3), 1000.0, True),
    ("1 + 1", _Store(0, busy=True), 1000.0, True),  # reads nothing: needs no lock
    # rule: more series x steps than MAX_POINTS (41 steps): a worker
    ("sum(r)", _Store(MAX_POINTS // 41 + 1), 1000.0, False),
    # rule: a subquery, or a range over an hour, costs more than its series x steps say: a worker
    ("max_over_time(rate(r[1m])[30m:10s])", _Store(1), 1000.0, False),
    ("avg_over_time(r[2h])", _Store(1), 20000.0, False),
    # rule: a read before the head (from SQLite, under the file lock): a worker
    ("r", _Store(1, head_from=800.0), 1000.0, False),
    # rule: another thread holds the store's memory lock (an append, retention): a worker, no wait
    ("r", _Store(1, busy=True), 1000.0, False),
])
def test_what_is_small(query: str, store: _Store, start: float, small: bool) -> None:
    got = run_if_small(store, parse_promql(query), start, start + 600, 15, lambda: "ran")
    assert (got == "ran") is small


class _Held(MemoryStore):
    """A store whose reads of series named ``slow`` hold until released (a query as slow as the test
    wants, on a worker)."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        if any(m.value == "slow" for m in matchers):
            self.entered.set()
            self.release.wait(60)
        return super().select(matchers, start, end)


def _held_app(limits: QueryLimits) -> tuple[_Held, QueryExecutor, TestClient]:
    store = _Held()
    for name in ("up", "slow"):
        store.append([Sample(Labels.of(name, job="a"), t, 1.0) for t in (940.0, 970.0, 1000.0)])
    executor = QueryExecutor(limits, forks=QueryForks())
    return store, executor, _client(store, executor, 1000.0)


def test_the_concurrency_limit_counts_queries_on_the_event_loop() -> None:
    # rule: max_concurrency 1 and its one worker busy: a small query waits in the queue like any other
    store, executor, c = _held_app(QueryLimits(max_concurrency=1, timeout=60))
    with c:
        slow: list[int] = []
        t1 = threading.Thread(target=lambda: slow.append(c.get(
            "/api/v1/query", params={"query": "sum_over_time(slow[5m:1m])", "time": "1000"}).status_code))
        t1.start()
        assert store.entered.wait(60)
        small: list[int] = []
        t2 = threading.Thread(target=lambda: small.append(c.get(
            "/api/v1/query", params={"query": "up", "time": "1000"}).status_code))
        t2.start()
        deadline = time.monotonic() + 60
        while executor.in_flight() < 2 and time.monotonic() < deadline:  # queued behind the slow one
            assert c.get("/-/healthy").status_code == 200  # the loop answers meanwhile
        assert executor.in_flight() == 2 and not small and executor.ran_here == 0
        store.release.set()
        t1.join(60)
        t2.join(60)
    assert slow == [200] and small == [200]
    assert executor.ran_here == 0  # it ran on the worker, once free
    executor.close()


def test_the_sample_limit_keeps_its_text_on_the_event_loop() -> None:
    _, executor, c = _held_app(QueryLimits(max_samples=2))
    with c:
        r = c.get("/api/v1/query_range", params={"query": "up", "start": "900", "end": "1000", "step": "5"})
    assert r.status_code == 422, r.text
    assert r.json()["error"] == ("query processing would load too many samples into memory in query "
                                 "execution (limit 2)")
    assert executor.in_flight() == 0
    executor.close()


def test_a_held_store_sends_the_query_to_a_worker_without_waiting() -> None:
    # rule: the event loop never waits for the store's lock: another thread holds it, the query goes to
    # a worker and the loop keeps answering
    store, executor, c = _held_app(QueryLimits(timeout=60))
    with c:
        got: list[int] = []
        held, done = threading.Event(), threading.Event()

        def hold() -> None:
            with store.fork_guard():  # the store's memory lock, as an append holds it
                held.set()
                done.wait(60)

        holder = threading.Thread(target=hold)
        holder.start()
        assert held.wait(60)
        asker = threading.Thread(target=lambda: got.append(c.get(
            "/api/v1/query", params={"query": "up", "time": "1000"}).status_code))
        asker.start()
        deadline = time.monotonic() + 60
        while executor.in_flight() < 1 and time.monotonic() < deadline:  # it waits, on a worker
            c.get("/-/healthy")
        assert executor.in_flight() == 1 and executor.ran_here == 0 and not got
        assert c.get("/-/healthy").status_code == 200  # the loop answers meanwhile
        done.set()
        holder.join(60)
        asker.join(60)
        r = c.get("/api/v1/query", params={"query": "up", "time": "1000"})
    assert got == [200] and r.status_code == 200
    assert executor.ran_here == 1  # the second one, the lock free
    executor.close()


def _metric(text: str, name: str) -> float:
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else -1.0


@pytest.mark.slow
def test_serve_answers_a_panel_on_the_event_loop(tmp_path: Path, target: FakeTarget) -> None:
    target.body = "".join(f'req_total{{code="{c}"}} {n}\n' for c, n in (("200", 990), ("500", 10)))
    cfg = (f"server: {{data_dir: '{tmp_path}/data', query: {{isolation: fork}}}}\n"
           f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 1s}}]}}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=120) as c:
        wait_scraped(c)
        now = time.time()
        panel = {"query": "sum by (code) (req_total)", "start": str(now - 60), "end": str(now), "step": "15"}
        r = c.post("/api/v1/query_range", data=panel)
        assert r.status_code == 200, r.text
        assert {x["metric"]["code"] for x in r.json()["data"]["result"]} == {"200", "500"}
        assert _metric(c.get("/metrics").text, "inferwatch_query_on_event_loop_total") >= 1.0
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
