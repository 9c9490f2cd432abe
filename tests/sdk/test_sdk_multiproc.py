"""The multiprocess store: exact merges, monotonic counters across dead workers, bounded rows.

Workers are simulated in one process (each store gets its own identity and a shared, hand-set
liveness table), so death and pid reuse happen exactly when the test says; one test uses real
child processes and a real SIGKILL.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.samples import Exemplar

from inferwatch.sdk import Monitor, read_sample
from inferwatch.sdk._requests import RequestAggregates
from inferwatch.sdk.multiproc._multiproc import DB_NAME, MultiprocStore, process_identity
from inferwatch.settings._env import ENV_MULTIPROC_DIR

BOUNDS = (0.001, 0.01, 0.1, 1.0)
SVC = ("svc", "m", "v1")


class Workers:
    """A liveness table the simulated workers share: (pid, start) -> alive."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.alive_set, self.stores = directory, set[tuple[int, float]](), []

    def alive(self, pid: int, started: float) -> bool:
        return (pid, started) in self.alive_set

    def start(self, pid: int, started: float, local: Callable[[], list[Metric]]) -> MultiprocStore:
        self.alive_set.add((pid, started))
        store = MultiprocStore(self.directory, local, lambda _t: True, interval_s=None,
                               identity=lambda: (pid, started), alive=self.alive)
        self.stores.append(store)
        return store

    def kill(self, pid: int, started: float) -> None:
        self.alive_set.discard((pid, started))


def requests_local(agg: RequestAggregates) -> Callable[[], list[Metric]]:
    return lambda: list(agg.families(SVC))


def value(families: list[Metric], name: str, **labels: str) -> float | None:
    for f in families:
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


def samples_of(families: list[Metric], name: str) -> dict[tuple[tuple[str, str], ...], float]:
    return {tuple(sorted(s.labels.items())): s.value for f in families for s in f.samples if s.name == name}


@pytest.fixture
def workers(tmp_path: Path) -> Workers:
    w = Workers(tmp_path)
    yield w
    for store in w.stores:
        store.close()


def test_histograms_merge_exactly(workers: Workers) -> None:
    # Rule: merged buckets, _count and the code counters equal one aggregate of all observations.
    rng = random.Random(7)
    everything = RequestAggregates(BOUNDS)
    stores = []
    for pid in (101, 102, 103):
        agg = RequestAggregates(BOUNDS)
        items = [("request", rng.choice(["/a", "/b"]), rng.choice([200, 500]), rng.expovariate(20))
                 for _ in range(rng.randint(50, 400))]
        agg.add_batch(items)
        everything.add_batch(items)
        stores.append(workers.start(pid, 1.0, requests_local(agg)))
        stores[-1].publish()
    merged = stores[0].families()
    want = list(everything.families(SVC))
    for name in ("inferwatch_request_duration_seconds_bucket", "inferwatch_request_duration_seconds_count",
                 "inferwatch_requests_total"):
        assert samples_of(merged, name) == samples_of(want, name), name
    got_sum, want_sum = (samples_of(x, "inferwatch_request_duration_seconds_sum") for x in (merged, want))
    assert got_sum.keys() == want_sum.keys()
    assert all(got_sum[k] == pytest.approx(want_sum[k], rel=1e-12) for k in want_sum)


def test_counters_never_go_back_when_workers_die_and_pids_are_reused(workers: Workers) -> None:
    # Rule: total = archive + live; a dead worker's last published values move to the archive, and
    # a reused pid with another start time is another worker (the dead one is still folded).
    aggs = {pid: RequestAggregates(BOUNDS) for pid in (1, 2)}
    a = workers.start(1, 10.0, requests_local(aggs[1]))
    b = workers.start(2, 10.0, requests_local(aggs[2]))
    seen: list[float] = []
    total = 0

    def record(pid: int, n: int) -> None:
        nonlocal total
        aggs[pid].add_batch([("request", "/p", 200, 0.005)] * n)
        total += n

    for step in range(30):
        record(1, 3)
        record(2, 5)
        b.publish()
        if step % 10 == 9:  # b dies (SIGKILL: no final publish); a new worker reuses its pid
            workers.kill(2, 10.0 + step)
            aggs[2] = RequestAggregates(BOUNDS)
            b = workers.start(2, 11.0 + step, requests_local(aggs[2]))
        got = value(a.families(), "inferwatch_requests_total", route="/p", code="200")
        assert got is not None
        seen.append(got)
    assert seen == sorted(seen), "a counter went backwards"
    assert seen[-1] == total  # every record was published before its worker died


def test_rows_depend_on_series_not_on_workers_that_ever_lived(workers: Workers) -> None:
    # Rule: compaction keeps (live workers + 1 archive) x series rows, however many died.
    live = workers.start(1, 1.0, requests_local(RequestAggregates(BOUNDS)))
    for pid in range(100, 160):
        agg = RequestAggregates(BOUNDS)
        agg.add_batch([("request", "/p", 200, 0.05)] * 2)
        store = workers.start(pid, 1.0, requests_local(agg))
        store.publish()
        workers.kill(pid, 1.0)
    families = live.families()
    assert value(families, "inferwatch_requests_total", route="/p", code="200") == 120
    db = sqlite3.connect(workers.directory / DB_NAME)
    try:
        (workers_left,) = db.execute("SELECT count(*) FROM workers").fetchone()
        (rows,) = db.execute("SELECT count(*) FROM samples WHERE worker NOT IN (SELECT id FROM workers)"
                             ).fetchone()
    finally:
        db.close()
    assert workers_left == 1
    assert rows == 1 + len(BOUNDS) + 1 + 2  # archive: one counter, the buckets with +Inf, _count, _sum


def gauges(inflight: float, queue: float) -> Callable[[], list[Metric]]:
    def local() -> list[Metric]:
        g = GaugeMetricFamily("inferwatch_inflight_requests", "in flight", labels=["service"])
        g.add_metric(["svc"], inflight)
        q = GaugeMetricFamily("inferwatch_sdk_queue_capacity", "capacity", labels=["service"])
        q.add_metric(["svc"], queue)
        return [g, q]
    return local


def test_gauges_are_per_live_worker_and_inflight_is_summed(workers: Workers) -> None:
    a = workers.start(1, 1.0, gauges(2, 100))
    b = workers.start(2, 1.0, gauges(3, 200))
    b.publish()
    fams = a.families()
    assert samples_of(fams, "inferwatch_inflight_requests") == {(("service", "svc"),): 5.0}
    assert samples_of(fams, "inferwatch_sdk_queue_capacity") == {
        (("pid", "1"), ("service", "svc")): 100.0, (("pid", "2"), ("service", "svc")): 200.0}
    workers.kill(2, 1.0)
    fams = a.families()
    assert samples_of(fams, "inferwatch_inflight_requests") == {(("service", "svc"),): 2.0}
    assert samples_of(fams, "inferwatch_sdk_queue_capacity") == {(("pid", "1"), ("service", "svc")): 100.0}


def test_the_newest_exemplar_of_any_worker_is_kept(workers: Workers) -> None:
    def local(trace: str, ts: float) -> Callable[[], list[Metric]]:
        def make() -> list[Metric]:
            h = HistogramMetricFamily("stage_seconds", "h", labels=["stage"])
            h.add_metric(["x"], [("1.0", 1, Exemplar({"trace_id": trace}, 0.5, ts)), ("+Inf", 1)], 0.5)
            c = CounterMetricFamily("errors", "c", labels=["stage"])
            c.add_metric(["x"], 1)
            return [h, c]
        return make
    a = workers.start(1, 1.0, local("aaa", 50.0))
    workers.start(2, 1.0, local("bbb", 70.0)).publish()
    workers.kill(2, 1.0)  # folded: its exemplar is the newer one and survives the fold
    fams = a.families()
    bucket = next(s for f in fams for s in f.samples
                  if s.name == "stage_seconds_bucket" and s.labels["le"] == "1.0")
    assert bucket.value == 2
    assert bucket.exemplar == Exemplar({"trace_id": "bbb"}, 0.5, 70.0)
    assert value(fams, "errors_total", stage="x") == 2


CHILD = """
import os, sys, time
from inferwatch.sdk import Monitor, read_sample
m = Monitor("svc", "m", "v1")
for _ in range(int(sys.argv[1])):
    m.record_request("/p", 200, 0.01)
m.metrics_text()  # a scrape publishes this worker's state
print("published", flush=True)
if sys.argv[2] == "hang":
    time.sleep(120)
"""


def test_real_processes_exit_and_are_killed_without_losing_totals(tmp_path: Path) -> None:
    env = {**os.environ, ENV_MULTIPROC_DIR: str(tmp_path)}
    labels = {"route": "/p", "code": "200", "service": "svc", "model": "m", "version": "v1"}
    with Monitor("svc", "m", "v1", multiprocess_dir=tmp_path) as monitor:
        monitor.record_request("/p", 200, 0.01)
        done = subprocess.run([sys.executable, "-c", CHILD, "7", "exit"], env=env, capture_output=True,
                              text=True, timeout=120, check=True)
        assert "published" in done.stdout
        assert monitor.get_sample_value("inferwatch_requests_total", labels) == 8
        hung = subprocess.Popen([sys.executable, "-c", CHILD, "5", "hang"], env=env,
                                stdout=subprocess.PIPE, text=True)
        try:
            assert hung.stdout is not None and "published" in hung.stdout.readline()
            assert monitor.get_sample_value("inferwatch_requests_total", labels) == 13
            os.kill(hung.pid, signal.SIGKILL)
            hung.wait(30)
        finally:
            hung.kill()
            hung.wait(30)
            hung.stdout.close()
        assert monitor.get_sample_value("inferwatch_requests_total", labels) == 13
        pids = {s.labels.get("pid") for f in monitor.registry.collect() for s in f.samples
                if s.name == "inferwatch_sdk_queue_capacity"}
        assert pids == {str(os.getpid())}  # the dead workers' gauges are gone


def test_merged_exposition_is_valid_openmetrics_and_text(tmp_path: Path) -> None:
    # Rule: the merged families render as the single-process ones do (buckets in order, _total).
    with Monitor("svc", "m", "v1", multiprocess_dir=tmp_path) as monitor:
        for d in (0.002, 0.02, 0.2, 2.0):
            monitor.record_request("/p", 200, d)
        om = {f.name: f for f in parse_openmetrics(monitor.metrics_text(openmetrics=True))}
        single = Monitor("svc", "m", "v1")
        for d in (0.002, 0.02, 0.2, 2.0):
            single.record_request("/p", 200, d)
        want = single.metrics_text()
        single.close()
        got = monitor.metrics_text()
    hist = om["inferwatch_request_duration_seconds"]
    assert [s.labels["le"] for s in hist.samples if s.name.endswith("_bucket")][-1] == "+Inf"
    lines = {line for line in got.splitlines() if line.startswith("inferwatch_request")}
    assert lines == {line for line in want.splitlines() if line.startswith("inferwatch_request")}


def test_env_var_turns_it_on_and_a_bad_directory_never_stops_the_app(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_MULTIPROC_DIR, str(tmp_path / "mp"))
    with Monitor("svc") as monitor:
        assert monitor.multiprocess is not None
        assert (tmp_path / "mp" / DB_NAME).exists()
    (tmp_path / "file").write_text("x")
    with Monitor("svc", multiprocess_dir=tmp_path / "file") as monitor:  # serves alone, counts the error
        assert monitor.multiprocess is not None and monitor.multiprocess.errors >= 1


@pytest.mark.tools
def test_promtool_accepts_the_merged_exposition(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    workers = Workers(tmp_path)
    try:
        agg = RequestAggregates(BOUNDS)
        agg.add_batch([("request", "/p", 200, 0.05), ("request", "/q", 500, 2.0)])
        # another worker, alive by the real check (it shares this process's pid and start time)
        other = workers.start(*process_identity(), lambda: list(agg.families(SVC)))
        other.publish()
        with Monitor("svc", "m", "v1", multiprocess_dir=tmp_path) as monitor:
            monitor.record_request("/p", 200, 0.01)
            text = monitor.metrics_text()
    finally:
        for store in workers.stores:
            store.close()
    assert read_sample(text, "inferwatch_requests_total",
                       {"route": "/p", "code": "200", "service": "svc", "model": "m", "version": "v1"}) == 2
    done = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_damaged_file_serves_this_workers_metrics_and_logs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture,
) -> None:
    # Rule: a scrape never fails because of the shared file; it falls back to this worker.
    with Monitor("svc", "m", "v1", multiprocess_dir=tmp_path) as monitor:
        monitor.record_request("/p", 200, 0.01)
        assert monitor.metrics_text()
        for name in (DB_NAME, DB_NAME + "-wal", DB_NAME + "-shm"):
            if (tmp_path / name).exists():
                (tmp_path / name).write_bytes(b"not a database" * 4096)
        monitor.record_request("/p", 200, 0.01)
        labels = {"route": "/p", "code": "200", "service": "svc", "model": "m", "version": "v1"}
        assert monitor.get_sample_value("inferwatch_requests_total", labels) == 2
    assert "serving this worker's metrics only" in caplog.text


class TokenHistogram:
    """An aggregator with its own histogram (as a new SDK feature would add one)."""

    kinds = ("tokens",)

    def __init__(self) -> None:
        self.counts = [0, 0]

    def consume(self, kind: str, payloads: object, now: float) -> None:
        for n in payloads:  # type: ignore[attr-defined]
            self.counts[0 if n <= 10 else 1] += 1

    def collect(self, now: float) -> list[Metric]:
        h = HistogramMetricFamily("tokens_per_request", "tokens", labels=["model"])
        h.add_metric(["m"], [("10.0", self.counts[0]), ("+Inf", sum(self.counts))], 0.0)
        return [h]


def test_an_attached_aggregators_histogram_is_merged_with_no_extra_code(tmp_path: Path) -> None:
    # Two monitors in one process are two workers (each has its own row in the file).
    with Monitor("svc", multiprocess_dir=tmp_path, aggregators=[TokenHistogram()]) as a, \
            Monitor("svc", multiprocess_dir=tmp_path, aggregators=[TokenHistogram()]) as b:
        for n in (3, 30, 5):
            a.observe("tokens", n)
        b.observe("tokens", 50)
        b.metrics_text()  # b publishes
        assert a.get_sample_value("tokens_per_request_bucket", {"model": "m", "le": "10.0"}) == 2
        assert a.get_sample_value("tokens_per_request_bucket", {"model": "m", "le": "+Inf"}) == 4
        assert a.get_sample_value("tokens_per_request_count", {"model": "m"}) == 4


def test_generation_histograms_merge_across_workers(tmp_path: Path) -> None:
    # The generation aggregator's histograms are carried like any other family.
    with Monitor("chat", "llama", "v1", multiprocess_dir=tmp_path) as a, \
            Monitor("chat", "llama", "v1", multiprocess_dir=tmp_path) as b:
        a.record_generation("/c", 200, 0.2, 1.0, 10, 20)
        b.record_generation("/c", 200, 0.3, 2.0, 10, 40)
        b.metrics_text()
        labels = {"model": "llama", "route": "/c", "service": "chat", "version": "v1"}
        name = "inferwatch_generation_time_to_first_token_seconds"
        assert a.get_sample_value(name + "_bucket", {**labels, "le": "0.25"}) == 1
        assert a.get_sample_value(name + "_bucket", {**labels, "le": "0.5"}) == 2
        assert a.get_sample_value(name + "_count", labels) == 2
