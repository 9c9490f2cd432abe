"""SDK recording: per-call cost, added latency at 1,000 req/s, aggregator throughput.

    python benchmarks/bench_sdk.py [--quick]

Side by side in one run:
1. per-call cost of ``Monitor.record_request`` against prometheus-client
   (``Counter.labels(...).inc()`` + ``Histogram.labels(...).observe()``, same
   five labels) and the OpenTelemetry SDK (``counter.add`` + ``histogram.record``
   with the same attributes, an in-memory reader attached);
2. latency added to each request at >= 1,000 req/s by (a) a synchronous HTTP
   POST per request to a collector on loopback (a separate process) and (b)
   inferwatch's enqueue;
3. the background aggregator's throughput (queue filled while the worker is
   held, then released and timed until it has aggregated everything).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import _results
from inferwatch.config import SdkConfig
from inferwatch.sdk import Monitor

LABELS = ("ranker", "ctr", "v3", "/predict", "200")
ROUTES = ("/predict", "/predict/batch", "/explain", "/health")


def per_call_ns(
    fn: Callable[[], None], calls: int, rounds: int, between: Callable[[], Any], *, timed: bool = False,
) -> float:
    """Median over rounds of the mean ns per call of ``fn``; ``between`` is timed only if ``timed``.

    As ``timeit`` does, the cyclic GC is off while timing (the same for every candidate).
    """
    results = []
    for _ in range(rounds):
        gc.disable()
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn()
        if timed:
            between()
        results.append((time.perf_counter_ns() - t0) / calls)
        gc.enable()
        if not timed:
            between()
    return statistics.median(results)


def bench_cost(calls: int, rounds: int) -> list[tuple[str, float]]:
    """ns per recorded request for inferwatch, prometheus-client and OpenTelemetry."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from prometheus_client import CollectorRegistry, Counter, Histogram

    gate = _Gate()
    monitor = Monitor("ranker", "ctr", "v3", config=SdkConfig(queue_size=4 * calls), aggregators=[gate])
    rec = monitor.record_request

    def hold() -> None:  # park the worker so the timed loop measures the request thread alone
        gate.release.set()
        monitor.flush(60)
        gate.entered.clear()
        gate.release.clear()
        monitor.observe("gate", None)
        gate.entered.wait(10)

    def iw() -> None:
        rec(route="/predict", status=200, duration_s=0.012)

    reg = CollectorRegistry()
    counter = Counter("req", "r", ("service", "model", "version", "route", "code"), registry=reg)
    hist = Histogram("dur_seconds", "d", ("service", "model", "version", "route"), registry=reg,
                     buckets=SdkConfig().buckets)

    def prom() -> None:
        counter.labels(*LABELS).inc()
        hist.labels(*LABELS[:4]).observe(0.012)

    provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    meter = provider.get_meter("bench")
    ocounter = meter.create_counter("requests")
    ohist = meter.create_histogram("duration", unit="s")
    attrs = {"service": "ranker", "model": "ctr", "version": "v3", "route": "/predict", "code": "200"}
    hattrs = {k: v for k, v in attrs.items() if k != "code"}

    def otel() -> None:
        ocounter.add(1, attrs)
        ohist.record(0.012, hattrs)

    hold()
    out = [("inferwatch record_request", per_call_ns(iw, calls, rounds, hold))]
    gate.release.set()
    out += [
        # all-in: the request thread's cost plus the background aggregation it causes (the flush)
        ("inferwatch incl. aggregation", per_call_ns(iw, calls, rounds, monitor.flush, timed=True)),
        ("prometheus-client inc+observe", per_call_ns(prom, calls, rounds, lambda: None)),
        ("opentelemetry-sdk add+record", per_call_ns(otel, calls, rounds, lambda: None)),
    ]
    assert monitor.get_sample_value("inferwatch_sdk_dropped_total",
                                    {"service": "ranker", "kind": "request"}) == 0.0
    monitor.close()
    provider.shutdown()
    return out


COLLECTOR = """
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(204); self.send_header("content-length", "0"); self.end_headers()
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"""


def paced(n: int, rate: float, call: Callable[[], None]) -> list[float]:
    """Call ``call`` n times at ``rate`` per second; return each call's duration in µs."""
    out, period = [], 1.0 / rate
    start = time.perf_counter()
    for i in range(n):
        while time.perf_counter() < start + i * period:
            pass  # busy-wait: sleep() is too coarse for a 1 ms period
        t0 = time.perf_counter_ns()
        call()
        out.append((time.perf_counter_ns() - t0) / 1000)
    return out


def bench_added_latency(n: int, rate: float) -> list[tuple[str, list[float], float]]:
    """Per-request added latency (µs) of a sync POST vs inferwatch, at ``rate`` req/s."""
    import httpx

    proc = subprocess.Popen([sys.executable, "-c", COLLECTOR], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        body = b'{"service":"ranker","route":"/predict","code":200,"duration_s":0.012}'
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            def post() -> None:
                client.post("/report", content=body, headers={"content-type": "application/json"})

            paced(50, rate, post)  # warm the connection
            t0 = time.perf_counter()
            sync = paced(n, rate, post)
            sync_rate = n / (time.perf_counter() - t0)
    finally:
        proc.terminate()
        proc.wait(5)
    monitor = Monitor("ranker", "ctr", "v3")

    def record() -> None:
        monitor.record_request("/predict", 200, 0.012)

    t0 = time.perf_counter()
    ours = paced(n, rate, record)
    ours_rate = n / (time.perf_counter() - t0)
    monitor.close()
    return [("(a) sync HTTP POST per request", sync, sync_rate),
            ("(b) inferwatch record_request", ours, ours_rate)]


class _Gate:
    """An aggregator that holds the worker until released (to fill the queue first)."""

    kinds = ("gate",)

    def __init__(self) -> None:
        self.entered, self.release = threading.Event(), threading.Event()

    def consume(self, kind: str, payloads: Sequence[Any], now: float) -> None:
        self.entered.set()
        self.release.wait(60)

    def collect(self, now: float) -> Iterable[Any]:
        return ()


def bench_aggregator(n: int) -> tuple[float, float]:
    """(requests/s aggregated by the worker alone, requests/s end to end with one producer)."""
    gate = _Gate()
    monitor = Monitor("ranker", "ctr", "v3", config=SdkConfig(queue_size=n + 10), aggregators=[gate])
    monitor.observe("gate", None)
    gate.entered.wait(10)
    codes = (200, 200, 200, 200, 200, 200, 200, 200, 500, 503)
    for i in range(n):
        monitor.record_request(ROUTES[i % 4], codes[i % 10], (i % 1000) / 2000)
    t0 = time.perf_counter()
    gate.release.set()
    monitor.flush(60)
    alone = n / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for i in range(n):
        monitor.record_request(ROUTES[i % 4], codes[i % 10], (i % 1000) / 2000)
    monitor.flush(60)
    both = n / (time.perf_counter() - t0)
    got = sum(monitor.get_sample_value("inferwatch_request_duration_seconds_count", {
        "service": "ranker", "model": "ctr", "version": "v3", "route": r}) or 0 for r in ROUTES)
    assert got == 2 * n, (got, n)
    monitor.close()
    return alone, both


def pct(xs: list[float], q: float) -> float:
    """The q-quantile (0..1) of xs, nearest rank."""
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer iterations (a smoke run)")
    args = parser.parse_args(argv)
    calls, rounds, n_lat, n_agg = (10_000, 5, 1_000, 50_000) if args.quick else (10_000, 31, 5_000, 500_000)

    print(f"1. per-call cost ({rounds} rounds x {calls:,} calls, median)")
    cost = bench_cost(calls, rounds)
    ours = cost[0][1]
    print(f"   {'':32} {'ns/call':>9} {'x inferwatch':>13}")
    for name, ns in cost:
        print(f"   {name:32} {ns:9.0f} {ns / ours:13.1f}")
    prom_ratio, otel_ratio = cost[2][1] / ours, cost[3][1] / ours
    verdict = {True: "OK", False: "MISSED"}
    print(f"   target: prometheus-client >= 10x -> {prom_ratio:.1f}x {verdict[prom_ratio >= 10]}; "
          f"OpenTelemetry >= 25x -> {otel_ratio:.1f}x {verdict[otel_ratio >= 25]}")

    print(f"\n2. latency added per request, {n_lat:,} requests paced at 1,000 req/s (µs)")
    print(f"   {'':32} {'rate/s':>7} {'p50':>9} {'p99':>9} {'max':>9}")
    lat = bench_added_latency(n_lat, 1000.0)
    for name, xs, rate in lat:
        print(f"   {name:32} {rate:7.0f} {pct(xs, 0.5):9.2f} {pct(xs, 0.99):9.2f} {max(xs):9.1f}")
    p99 = pct(lat[1][1], 0.99)
    print(f"   target: inferwatch p99 < 20 µs -> {p99:.2f} µs {'OK' if p99 < 20 else 'MISSED'}; "
          f"sync POST p99 is {pct(lat[0][1], 0.99) / p99:.0f}x ours")

    print(f"\n3. aggregator throughput ({n_agg:,} requests, 4 routes, 3 codes)")
    alone, both = bench_aggregator(n_agg)
    print(f"   worker alone (queue pre-filled)   {alone:12,.0f} req/s")
    print(f"   one producer + worker, end to end {both:12,.0f} req/s")
    print(f"   target: >= 50,000 req/s -> {'OK' if alone >= 50_000 else 'MISSED'}")
    prom, otel = cost[2][1], cost[3][1]
    _results.record("SDK overhead", "Recording one request, request thread", f"{ours:,.0f} ns",
                    f"prometheus-client `inc` + `observe` {prom:,.0f} ns; OpenTelemetry SDK {otel:,.0f} ns",
                    f"{ours / prom:.3f} ({prom / ours:.0f}x cheaper); {ours / otel:.3f} ({otel / ours:.0f}x)")
    sync99 = pct(lat[0][1], 0.99)
    _results.record("SDK overhead", "Latency added per request at 1,000 req/s, p99", f"{p99:.2f} µs",
                    f"a synchronous HTTP POST per request: {sync99:,.0f} µs", f"{p99 / sync99:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
