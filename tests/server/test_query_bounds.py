"""Issue 21 #1: a query cannot freeze the server (off the event loop, timeout, sample limit, RE2)."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from inferwatch.config import QueryLimits, parse_config
from inferwatch.model import Labels, Matcher, Sample, SimulatedClock
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.api._query_exec import QueryExecutor
from inferwatch.store import MemoryStore, Series

from ._proc import serve, wait_scraped
from .conftest import FakeTarget


class BlockingStore(MemoryStore):
    """A store whose ``select`` holds until released: a query as slow as the test wants."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()
        self.block = True

    def select(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        if self.block:
            self.entered.set()
            self.release.wait(30.0)
        return super().select(matchers, start, end)

    def select_latest(self, matchers: Sequence[Matcher], start: float, end: float) -> list[Series]:
        if self.block:  # an instant query reads only each series' last sample
            self.entered.set()
            self.release.wait(30.0)
        return super().select_latest(matchers, start, end)


def _app(store: MemoryStore, limits: QueryLimits) -> tuple[Server, QueryExecutor, TestClient]:
    clock = SimulatedClock(1000.0)
    for job in ("a", "b"):
        store.append([Sample(Labels.of("up", job=job), t, 1.0) for t in (940.0, 970.0, 1000.0)])
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                    clock=clock)
    executor = QueryExecutor(limits)
    return server, executor, TestClient(create_app(server, executor=executor), raise_server_exceptions=False)


@pytest.fixture
def blocking() -> Iterator[tuple[BlockingStore, QueryExecutor, TestClient]]:
    store = BlockingStore()
    server, executor, client = _app(store, QueryLimits(timeout=30))
    with client:
        yield store, executor, client
    store.release.set()
    executor.close()
    server.stop()


def test_health_answers_while_a_query_runs(blocking: tuple[BlockingStore, QueryExecutor, TestClient]) -> None:
    # rule: the event loop only awaits a query; one TestClient portal = one event loop for all requests
    store, executor, c = blocking
    answered: list[int] = []
    th = threading.Thread(
        target=lambda: answered.append(c.get("/api/v1/query?query=up&time=1000").status_code))
    th.start()
    assert store.entered.wait(60)
    assert c.get("/-/healthy").status_code == 200
    assert c.get("/api/v1/targets").status_code == 200
    assert executor.in_flight() == 1 and not answered  # the query was still running meanwhile
    store.release.set()
    th.join(60)
    assert answered == [200]


def test_a_query_past_its_timeout_answers_503_and_frees_its_worker() -> None:
    store = BlockingStore()
    server, executor, client = _app(store, QueryLimits(timeout=0.5, max_concurrency=1))
    with client as c:
        r = c.get("/api/v1/query?query=up&time=1000")
        assert r.status_code == 503
        assert r.json()["errorType"] == "timeout" and "query timed out" in r.json()["error"]
        store.block = False
        store.release.set()  # the worker wakes, sees its query cancelled, and is free again
        # its one worker takes work in order: a no-op answered means the cancelled query has left it
        # (on a loaded runner the wake-up can take longer than the 0.5 s the next query may wait)
        executor._pool.submit(lambda: None).result(60)
        r = c.get("/api/v1/query?query=up&time=1000")
        assert r.status_code == 200 and len(r.json()["data"]["result"]) == 2
    executor.close()
    server.stop()


def test_closing_the_executor_cancels_running_queries(
        blocking: tuple[BlockingStore, QueryExecutor, TestClient]) -> None:
    # rule: a shutdown does not wait for a query: it is answered "canceled" at once
    store, executor, c = blocking
    answered: list[httpx.Response] = []
    th = threading.Thread(target=lambda: answered.append(c.get("/api/v1/query?query=up&time=1000")))
    th.start()
    assert store.entered.wait(60)
    executor.close()
    th.join(60)
    assert answered and answered[0].status_code == 503 and answered[0].json()["errorType"] == "canceled"


@pytest.mark.parametrize(("path", "params"), [
    # 6 samples in the 5m range (an instant selector reads only each series' last sample: 2)
    ("/api/v1/query", {"query": "count_over_time(up[5m])", "time": "1000"}),
    ("/api/v1/query_range", {"query": "up", "start": "1000", "end": "1002", "step": "1"}),  # 6 points
])
def test_the_sample_limit_is_a_422(path: str, params: dict[str, str]) -> None:
    server, executor, client = _app(MemoryStore(), QueryLimits(max_samples=5))
    with client as c:
        r = c.get(path, params=params)
    executor.close()
    server.stop()
    assert r.status_code == 422, r.text
    assert r.json()["errorType"] == "execution"
    assert "would load too many samples into memory" in r.json()["error"]


@pytest.mark.parametrize(("path", "params"), [
    ("/api/v1/series", {"match[]": "up"}),  # 2 series
    ("/api/v1/labels", {"match[]": "up", "start": "900", "end": "1000"}),  # 6 samples read
])
def test_metadata_look_ups_run_on_the_bounded_executor(path: str, params: dict[str, str]) -> None:
    # rule: series and label look-ups (Prometheus's routes) read through the executor's bounds too
    server, executor, client = _app(MemoryStore(), QueryLimits(max_samples=1))
    with client as c:
        r = c.get(path, params=params)
    executor.close()
    server.stop()
    assert r.status_code == 422, r.text
    assert "would load too many samples into memory" in r.json()["error"]


def test_a_chain_of_5000_additions_evaluates_without_a_recursion_error() -> None:
    # rule: Prometheus evaluates a flat chain of 5,000 `+` terms; so does the engine (no RecursionError)
    server, executor, client = _app(MemoryStore(), QueryLimits())
    with client as c:
        r = c.get("/api/v1/query", params={"query": " + ".join(["up"] * 5000), "time": "1000"})
        deep = c.get("/api/v1/query", params={"query": "(" * 500 + "up" + ")" * 500, "time": "1000"})
    executor.close()
    server.stop()
    assert r.status_code == 200, r.text
    assert {x["value"][1] for x in r.json()["data"]["result"]} == {"5000"}
    assert deep.status_code == 400 and deep.json()["errorType"] == "bad_data", deep.text


@pytest.mark.slow
def test_a_backtracking_regex_cannot_stall_a_real_server(tmp_path: Path, target: FakeTarget) -> None:
    # rule: matchers are RE2 (linear time): `(\w|\w)*z` against a 40-character name answers at once;
    # Python's `re` takes 2^40 steps on it, and /-/healthy and every scrape stalled meanwhile
    target.body = f"{'a' * 40} 1\n"
    cfg = (f"server: {{data_dir: '{tmp_path}/data', query: {{timeout: 20s}}}}\n"
           f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 1s}}]}}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        wait_scraped(c)
        r = c.get("/api/v1/series", params={"match[]": '{__name__=~"(\\\\w|\\\\w)*z"}'})
        assert r.status_code == 200 and r.json()["data"] == [], r.text
        q = c.get("/api/v1/query", params={"query": '{__name__=~"(\\\\w|\\\\w)*a"}'})
        assert q.status_code == 200 and len(q.json()["data"]["result"]) == 1, q.text
        assert c.get("/-/healthy").status_code == 200
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


@pytest.mark.slow
def test_a_heavy_range_query_times_out_while_health_keeps_answering(
        tmp_path: Path, target: FakeTarget) -> None:
    # rule: 11,000 steps over 2,000 series would run for minutes; the 1 s timeout answers 503 and
    # /-/healthy answers meanwhile (before: the event loop was blocked for the whole query)
    target.body = "".join(f'heavy{{k="{k}"}} {k}\n' for k in range(2000))
    cfg = (f"server: {{data_dir: '{tmp_path}/data', query: {{timeout: 1s}}}}\n"
           f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 1s}}]}}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=30) as c:
        wait_scraped(c)
        last = c.get("/api/v1/targets").json()["data"]["activeTargets"][0]["lastScrape"]  # RFC 3339
        now = datetime.fromisoformat(last).timestamp()
        answer: list[httpx.Response] = []
        params = {"query": "sum(rate(heavy[5m])) + count(heavy)", "start": str(now - 10_999),
                  "end": str(now), "step": "1"}
        th = threading.Thread(target=lambda: answer.append(c.get("/api/v1/query_range", params=params)))
        th.start()
        healthy = 0
        while th.is_alive():
            healthy += c.get("/-/healthy", timeout=5).status_code == 200
        th.join()
        assert answer[0].status_code == 503 and answer[0].json()["errorType"] == "timeout", answer[0].text
        assert healthy >= 1
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)


def test_column_reads_count_toward_the_sample_limit(tmp_path: Path) -> None:
    # rule (issue 46): the store's batch reads (a range's samples, the newest samples) are checked and
    # counted as select's are: past the limit the query stops with the limit's error
    from inferwatch.model import parse_matchers
    from inferwatch.server.api._query_exec import BoundedStore, QueryContext, QueryTooLarge
    from inferwatch.store import SQLiteStore

    st = SQLiteStore(tmp_path / "t.sqlite", clock=SimulatedClock(1000.0))
    st.append_columns([Labels.of("up", job=str(i)) for i in range(10)], [990.0] * 10, [1.0] * 10)
    m = parse_matchers('{__name__="up"}')
    with pytest.raises(QueryTooLarge):
        BoundedStore(st, QueryContext(30.0, 5)).select_columns(m, 900.0, 1000.0)
    ctx = QueryContext(30.0, 100)
    got = BoundedStore(st, ctx).select_latest_columns(m, 900.0, 1000.0)
    assert got is not None and len(got.labels) == 10 and ctx.samples == 10
    assert BoundedStore(MemoryStore(), ctx).select_columns(m, 900.0, 1000.0) is None  # no columns: select
    st.column_chunk = 4  # a range query's selector read a batch at a time: each batch counted as it comes
    ctx = QueryContext(30.0, 9)
    got = BoundedStore(st, ctx).select_column_chunks(m, 900.0, 1000.0)
    assert got is not None and len(got[0]) == 10
    batches = got[1]
    assert len(next(batches).labels) == 4 and len(next(batches).labels) == 4 and ctx.samples == 8
    with pytest.raises(QueryTooLarge):
        next(batches)
    assert BoundedStore(MemoryStore(), ctx).select_column_chunks(m, 900.0, 1000.0) is None
    st.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a nice value per thread is Linux's")
@pytest.mark.parametrize("nice", [0, 7])
def test_query_threads_run_at_a_lower_os_priority_than_the_server(nice: int) -> None:
    # rule (issue 46): a rule round's thread gets a core before a heavy query's on a busy machine: the
    # query workers' own nice value is raised by server.query.nice at their start; the server's stays
    def own_nice(_ctx: object) -> int:
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    ex = QueryExecutor(QueryLimits(nice=nice))
    try:
        assert asyncio.run(ex.run(own_nice)) == min(19, base + nice)
    finally:
        ex.close()
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base
