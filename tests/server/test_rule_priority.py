"""Issue 46: rule rounds go before queries, and a round that cannot run on time is counted."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from inferwatch.config import QueryLimits, parse_config
from inferwatch.model import Priority, SimulatedClock, pinned
from inferwatch.rules import Alert
from inferwatch.server import Server, build_components, create_app
from inferwatch.server.api._query_exec import QueryContext

WAIT = 60.0  # generous bound: each wait returns as soon as its condition holds


def _waiter(priority: Priority, *, pin: bool = False) -> tuple[threading.Thread, threading.Event]:
    done = threading.Event()

    def run() -> None:
        if pin:
            with pinned():
                priority.wait_turn()
        else:
            priority.wait_turn()
        done.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, done


def test_a_query_thread_waits_while_a_round_runs_and_goes_on_after() -> None:
    # rule: wait_turn blocks while first() is held, and returns as soon as it is released
    p = Priority()
    with p.first():
        t, done = _waiter(p)
        assert not done.wait(0.2)  # still waiting (a wait that ends early fails this assert)
    assert done.wait(WAIT)
    t.join(WAIT)
    assert p.waited_s > 0


def test_a_thread_inside_a_store_lock_never_waits() -> None:
    # rule: a pinned thread (one holding a store's lock, which the round may need) is not held back
    p = Priority()
    with p.first():
        t, done = _waiter(p, pin=True)
        assert done.wait(WAIT)
    t.join(WAIT)


def test_a_hung_round_holds_queries_back_for_max_wait_only() -> None:
    p = Priority(max_wait=0.05)
    with p.first():
        t, done = _waiter(p)
        assert done.wait(WAIT)
    t.join(WAIT)


def test_the_query_context_waits_for_the_round_before_its_checks() -> None:
    # rule: every deadline check of an API query past its grace of CPU is a point where it
    # yields to a rule round
    p = Priority()
    used = iter([0.0, 0.5, 0.5])  # the first check starts the count; the second is 0.5 s of CPU on
    ctx = QueryContext(120.0, 1000, priority=p, cpu=lambda: next(used))
    ctx.check()
    done = threading.Event()
    with p.first():
        t = threading.Thread(target=lambda: (ctx.check(), done.set()), daemon=True)
        t.start()
        assert not done.wait(0.2)
    assert done.wait(WAIT)
    t.join(WAIT)


def test_a_short_query_goes_on_while_a_round_runs() -> None:
    # rule: a query that has used less than its grace (the dashboard's panels) does not wait
    p = Priority(grace=0.1)
    cpu = [0.0]
    ctx = QueryContext(120.0, 1000, priority=p, cpu=lambda: cpu[0])
    with p.first():
        ctx.check("queue")
        cpu[0] = 0.09
        ctx.check()  # returns at once: a wait here would hang the test for max_wait (30 s)
        assert p.waited_s == 0.0
        cpu[0] = 0.2
        t = threading.Thread(target=ctx.check, daemon=True)
        t.start()
        t.join(0.2)
        assert t.is_alive()  # past its grace it waits for the round
    t.join(WAIT)
    assert not t.is_alive()


def test_query_workers_default_to_four_a_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert QueryLimits().workers() == 8
    monkeypatch.setattr("os.cpu_count", lambda: 64)
    assert QueryLimits().workers() == 16
    assert QueryLimits(max_concurrency=20).workers() == 20


def _values(text: str) -> dict[str, float]:
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples if not s.labels}


def test_rounds_that_cannot_run_on_time_are_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # rule: a round taking 12 s at a 5 s interval skips the rounds due meanwhile, and says so as
    # Prometheus does (iterations_missed_total; iterations_total counts run and missed)
    clock = SimulatedClock(1000.0)
    cfg = parse_config(f"server: {{data_dir: '{tmp_path}', evaluation_interval: 5s}}\n")
    server = Server(build_components(cfg, clock=clock), clock=clock)
    rounds: list[float] = []

    def slow(now: float | None = None) -> list[Alert]:
        assert server.priority.busy  # queries wait while the round runs
        rounds.append(clock.monotonic())
        clock.advance(12.0)
        if len(rounds) == 3:
            server._stop.set()
        return []

    monkeypatch.setattr(server.components.evaluator, "evaluate", slow)
    server._run()  # on the simulated clock: returns after the third round
    with TestClient(create_app(server)) as c:
        v = _values(c.get("/metrics").text)
    server.stop()
    assert rounds == [1000.0, 1015.0, 1030.0]  # each next round on the 5 s grid after the slow one
    assert v["inferwatch_rule_group_iterations_missed_total"] == 6  # 2 skipped after each of the three
    assert v["inferwatch_rule_group_iterations_total"] == 3 + 6
    assert v["inferwatch_rule_group_interval_seconds"] == 5.0
    assert v["inferwatch_rule_group_last_duration_seconds"] == 12.0
    assert 0.0 <= v["inferwatch_rule_group_last_cpu_seconds"] < 12.0  # the thread's own CPU, not the clock


def test_the_default_pack_pages_p1_when_rounds_keep_being_skipped() -> None:
    # rule: more than two rounds skipped in 10 minutes, for 5 minutes, pages P1; one slow round does not
    from inferwatch.model import Labels, Sample
    from inferwatch.rules import Evaluator, default_rule_pack
    from inferwatch.store import MemoryStore

    (rule,) = [r for r in default_rule_pack() if r.name == "RuleGroupIterationsMissed"]
    assert rule.tier.value == "P1"

    def run(missed_per_minute: float) -> list[str]:
        store, clock = MemoryStore(), SimulatedClock(1000.0)
        ev = Evaluator([rule], store, clock=clock)
        firing: list[Alert] = []
        for step in range(40):  # 20 minutes at 30 s
            t = 1000.0 + 30 * step
            missed = 1.0 if missed_per_minute == 0 and step >= 4 else missed_per_minute * step / 2
            store.append([Sample(Labels.of("inferwatch_rule_group_iterations_missed_total"), t, missed)])
            firing = ev.evaluate(t)
        return [a.name for a in firing]

    assert run(1.0) == ["RuleGroupIterationsMissed"]  # a round skipped every minute
    assert run(0.0) == []  # a single skipped round


def test_serve_reports_its_rounds_and_answers_queries_beside_them(tmp_path: Path) -> None:
    # rule: `inferwatch serve` counts scheduled and missed rounds on /metrics, and its query
    # workers (which yield to the rounds) still answer
    import time

    import httpx
    from tests.server._proc import serve

    cfg = f"server: {{data_dir: '{tmp_path / 'data'}', evaluation_interval: 1s}}\n"
    with serve(cfg, tmp_path) as served, httpx.Client(base_url=served.url, timeout=30) as c:
        deadline = time.monotonic() + WAIT
        seen: dict[str, float] = {}
        while time.monotonic() < deadline:
            seen = _values(c.get("/metrics").text)
            if seen.get("inferwatch_rule_group_iterations_total", 0) >= 2:
                break
            time.sleep(0.2)
        form = {"query": "vector(1)", "start": "0", "end": "60", "step": "15"}
        r = c.get("/api/v1/query_range", params=form)
    assert seen["inferwatch_rule_group_iterations_total"] >= 2
    assert "inferwatch_rule_group_iterations_missed_total" in seen
    assert seen["inferwatch_rule_group_interval_seconds"] == 1.0
    assert "inferwatch_query_rule_priority_wait_seconds_total" in seen
    assert r.status_code == 200 and len(r.json()["data"]["result"][0]["values"]) == 5
