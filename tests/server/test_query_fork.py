"""Issue 46 #3: heavy queries evaluated in a forked child answer exactly as on a thread, within the limits."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import psutil
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
from inferwatch.model import Labels, Sample, SimulatedClock
from inferwatch.promql import parse_promql
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.api import query_executor
from inferwatch.server.api._query_exec import QueryContext, QueryExecutor, QueryTimeout
from inferwatch.server.api._query_fork import ForkFailed, QueryForks
from inferwatch.store import MemoryStore, SQLiteStore

from ._proc import serve, wait_scraped
from .conftest import FakeTarget

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked queries need os.fork")


@pytest.fixture(scope="module")
def apps() -> Iterator[tuple[QueryForks, TestClient, TestClient]]:
    """The demo data behind two apps: every query forked (``fork_min_points: 1``), and none."""
    store, clock = demo_store(), SimulatedClock(float(END))
    clients = []
    forked = query_executor(QueryLimits(isolation="fork", fork_min_points=1, fork_nice=0,
                                        fork_scheduler="normal"))
    assert forked.forks is not None
    for executor in (forked, query_executor(QueryLimits(isolation="thread"))):
        server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                        clock=clock)
        clients.append(TestClient(create_app(server, executor=executor), raise_server_exceptions=False))
    yield forked.forks, clients[0], clients[1]
    for c in clients:
        c.close()


def _cases() -> list[str]:
    tester = [c.query for c in expand_cases()] if query_file() is not None else []
    return tester[::20] + EXTRA_QUERIES + EXTRA_FAILING + [
        "sum(demo_num_cpus) by (instance) * on(job) demo_num_cpus",  # many-to-many: an execution error
        "demo_num_cpus[5m]",  # a range vector in a range query: bad_data
    ]


def test_forked_answers_are_byte_for_byte_the_threads(
        apps: tuple[QueryForks, TestClient, TestClient]) -> None:
    # rule: the child evaluates on a copy of the process: same answers, same errors (type, status, text)
    forks, fork, thread = apps
    before = forks.forks
    forms = [({"query": q, "start": str(START), "end": str(END), "step": str(STEP)}, "/api/v1/query_range")
             for q in _cases()]
    forms += [({"query": q, "time": str(END)}, "/api/v1/query") for q in EXTRA_QUERIES[:20]]
    for form, path in forms:
        a, b = fork.post(path, data=form), thread.post(path, data=form)
        assert (a.status_code, a.content) == (b.status_code, b.content), (path, form["query"])
    assert forks.forks - before >= 0.8 * len(forms)  # not: parse errors, queries reading no series
    assert forks.running() == 0


def test_the_sample_limit_keeps_its_text_in_a_child() -> None:
    store, clock = MemoryStore(), SimulatedClock(1000.0)
    store.append([Sample(Labels.of("g", k=str(k)), float(t), 1.0)
                  for k in range(3) for t in range(400, 1000, 5)])
    forks = QueryForks(min_points=1, nice=0, scheduler="normal")
    ex = QueryExecutor(QueryLimits(max_samples=100), forks=forks)
    server = Server(build_components(parse_config("storage: {type: memory}"), clock=clock, store=store),
                    clock=clock)
    with TestClient(create_app(server, executor=ex), raise_server_exceptions=False) as c:
        r = c.get("/api/v1/query_range", params={"query": "g", "start": "700", "end": "1000", "step": "5"})
    assert r.status_code == 422, r.text
    assert r.json()["error"] == ("query processing would load too many samples into memory in query "
                                 "execution (limit 100)")
    assert forks.forks == 1


def _run(forks: QueryForks, compute: object, timeout: float = 30.0) -> bytes:
    ex = QueryExecutor(QueryLimits(timeout=timeout), forks=forks)
    try:
        return asyncio.run(ex.run(lambda c: forks.run(MemoryStore(), 0.0, compute, c)))  # type: ignore[arg-type]
    finally:
        ex.close()


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _wait(cond: object, within_s: float = 60.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if cond():  # type: ignore[operator]
            return True
        time.sleep(0.01)
    return False


def test_a_child_that_dies_answers_a_clear_error_and_is_reaped() -> None:
    forks = QueryForks(min_points=1, nice=0, scheduler="normal")
    with pytest.raises(ForkFailed, match=r"ended without an answer \(exit status 3\)") as err:
        _run(forks, lambda c: os._exit(3))
    assert err.value.status == 503
    pid = int(re.findall(r"process (\d+)", str(err.value))[0])
    assert _gone(pid)  # reaped before the answer: no zombie left
    assert forks.running() == 0 and forks.failures == 1


def test_the_timeout_kills_the_child(tmp_path: Path) -> None:
    # rule: at the query's timeout the child is killed (SIGKILL) and reaped; the answer is the timeout error
    forks = QueryForks(min_points=1, nice=0, scheduler="normal")
    pidfile = tmp_path / "pid"

    def forever(ctx: QueryContext) -> bytes:
        pidfile.write_text(str(os.getpid()))
        threading.Event().wait()  # never set: only a signal ends it
        return b""

    with pytest.raises(QueryTimeout, match="timed out"):
        _run(forks, forever, timeout=2.0)
    assert _wait(pidfile.exists)
    pid = int(pidfile.read_text())
    assert _wait(lambda: _gone(pid)), f"child {pid} still there"
    assert _wait(lambda: forks.running() == 0)


def test_an_error_in_the_child_comes_back_as_itself() -> None:
    def boom(ctx: QueryContext) -> bytes:
        raise ValueError("boom in the child")

    with pytest.raises(ValueError, match="boom in the child"):
        _run(QueryForks(min_points=1, nice=0, scheduler="normal"), boom)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="lists descriptors from /proc")
def test_the_child_keeps_none_of_the_servers_descriptors() -> None:
    # rule: a socket the server closes must not stay open in a child (nor another child's pipe)
    with socket.socket() as sock:
        fds = _run(QueryForks(min_points=1, nice=0, scheduler="normal"),
                   lambda c: " ".join(os.listdir("/proc/self/fd")).encode())
        held = {int(x) for x in fds.split()}
        assert sock.fileno() not in held, held


def test_light_queries_and_reads_before_the_head_stay_on_a_thread(tmp_path: Path) -> None:
    store = MemoryStore()
    store.append([Sample(Labels.of("g", k=str(i)), 100.0, 1.0) for i in range(50)])
    forks = QueryForks(min_points=1000)
    expr = parse_promql("sum(g)")
    assert forks.earliest(store, expr, 100.0, 100.0) is None  # 50 series x 1 step: light
    assert forks.earliest(store, expr, 0.0, 100.0, 1.0) == -300.0  # 50 x 101 steps: heavy
    disk = SQLiteStore(tmp_path / "t.sqlite", clock=SimulatedClock(10_000.0), head_window=600)
    try:
        # the head starts at 9,400: a query reading from 0 runs here, not in a child
        assert _run_here(forks, disk, 0.0) == b"here" and forks.forks == 0
    finally:
        disk.close()


def _run_here(forks: QueryForks, store: object, earliest: float) -> bytes:
    ctx = QueryContext(30.0, 1000)
    pid = os.getpid()
    return forks.run(store, earliest, lambda c: b"here" if os.getpid() == pid else b"child", ctx)


def _metric(text: str, name: str) -> float:
    m = re.search(rf"^{name} (\S+)$", text, re.M)
    return float(m.group(1)) if m else -1.0


@pytest.mark.slow
def test_serve_answers_a_heavy_query_from_a_child_and_leaves_no_zombie(
        tmp_path: Path, target: FakeTarget) -> None:
    target.body = "".join(f'heavy{{k="{k}"}} {k}\n' for k in range(2000))
    cfg = (f"server: {{data_dir: '{tmp_path}/data', query: {{isolation: fork}}}}\n"
           f"scrape: {{targets: [{{job: svc, url: '{target.url}', interval: 1s}}]}}\n")
    with serve(cfg, tmp_path) as s, httpx.Client(base_url=s.url, timeout=120) as c:
        wait_scraped(c)
        now = time.time()
        heavy = {"query": "count(heavy > 100)", "start": str(now - 100), "end": str(now), "step": "1"}
        r = c.get("/api/v1/query_range", params=heavy)  # 2,000 series x 101 steps: forks
        assert r.status_code == 200 and r.json()["data"]["result"], r.text
        light = c.get("/api/v1/query", params={"query": 'heavy{k="7"}'})
        assert light.status_code == 200 and len(light.json()["data"]["result"]) == 1
        metrics = c.get("/metrics").text
        assert _metric(metrics, "inferwatch_query_forks_total") == 1.0, metrics
        # two identical heavy queries at once: one child each, or one shared (when they overlap); the
        # same answer either way
        same = {**heavy, "query": "count(heavy > 10)", "start": str(now - 105), "end": str(now - 5)}  # stored
        with ThreadPoolExecutor(2) as pool:
            both = list(pool.map(lambda _: c.get("/api/v1/query_range", params=same), range(2)))
        assert [r.status_code for r in both] == [200, 200] and both[0].content == both[1].content
        metrics = c.get("/metrics").text
        shared = _metric(metrics, "inferwatch_query_shared_total")
        assert shared in (0.0, 1.0) and _metric(metrics, "inferwatch_query_forks_total") == 3.0 - shared
        assert _metric(metrics, "inferwatch_query_fork_slot_waiting") == 0.0, metrics
        # 2,000 series x 10,000 steps in a child (minutes of work), stopped by the request's 2 s timeout:
        # killed and reaped (reaching the fork takes milliseconds of it)
        slow = {**heavy, "query": "sum(rate(heavy[1m])) + count(heavy)", "start": str(now - 1000),
                "step": "0.1", "timeout": "2s"}
        r = c.get("/api/v1/query_range", params=slow)
        assert r.status_code == 503 and r.json()["errorType"] == "timeout", r.text
        proc = psutil.Process(s.proc.pid)
        assert _wait(lambda: not proc.children()), [p.status() for p in proc.children()]
        metrics = c.get("/metrics").text
        assert _metric(metrics, "inferwatch_query_forks_total") == 4.0 - shared, metrics
        assert _metric(metrics, "inferwatch_query_fork_failures_total") == 1.0, metrics
    assert not any("Traceback" in line for line in s.lines), "".join(s.lines)
