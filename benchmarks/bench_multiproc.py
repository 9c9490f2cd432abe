"""Several workers: inferwatch's multiprocess store against prometheus-client's multiprocess mode.

    python benchmarks/bench_multiproc.py [--quick] [--restarts N]    (make bench BENCH=multiproc)

Side by side in one run, the same workload (requests on 4 routes, code 200, the same 5 labels
and 13 latency buckets) with each library in its multiprocess mode (``INFERWATCH_MULTIPROC_DIR``
against ``PROMETHEUS_MULTIPROC_DIR``; each side runs in its own child process because
prometheus-client chooses its value class when imported):

1. per-request cost in a worker: the request thread's cost per request (inferwatch: the queue
   append; prometheus-client: ``Counter.labels().inc()`` + ``Histogram.labels().observe()``,
   each a locked write into an mmapped file), and the whole process's CPU per request including
   inferwatch's background aggregation and publishing to SQLite;
2. scrape time with 4 live workers, then after N worker restarts (default 1,000; simulated by
   forking short-lived workers that record 20 requests and exit, as ``max_requests`` recycling
   does), and after N workers killed with SIGKILL (inferwatch folds them on the first scrape;
   prometheus-client never forgets a file).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import _results

LABELS = ("ranker", "ctr", "v3")
ROUTES = ("/predict", "/predict/batch", "/explain", "/health")
BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
PER_WORKER = 20
ROUNDS = 15
"""Rounds of the cost workload; each round stays below the SDK queue's capacity (65,536), so
nothing is dropped and the totals can be checked exactly."""


# --- the two sides, each run in a child process ------------------------------------------------
class Prom:
    """prometheus-client in multiprocess mode (the env var is set before it is imported)."""

    def __init__(self, directory: str) -> None:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = directory
        from prometheus_client import Counter, Histogram

        names = ("service", "model", "version", "route", "code")
        self.requests = Counter("inferwatch_requests", "requests", names)
        self.latency = Histogram("inferwatch_request_duration_seconds", "latency", names[:4], buckets=BUCKETS)

    def record(self, route: str, duration: float) -> None:
        self.requests.labels(*LABELS, route, "200").inc()
        self.latency.labels(*LABELS, route).observe(duration)

    def start_worker(self) -> None:
        pass  # values follow the pid by themselves

    def end_worker(self) -> None:
        pass  # counters and histograms have no per-worker cleanup (mark_process_dead is for gauges)

    def scrape(self) -> bytes:
        from prometheus_client import CollectorRegistry, generate_latest, multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return bytes(generate_latest(registry))


class Inferwatch:
    """inferwatch's Monitor with a multiprocess directory."""

    def __init__(self, directory: str) -> None:
        from inferwatch.sdk import Monitor

        self.directory, self.make = directory, Monitor
        self.monitor: Any = None

    def start_worker(self) -> None:
        self.monitor = self.make(*LABELS, multiprocess_dir=self.directory)

    def record(self, route: str, duration: float) -> None:
        self.monitor.record_request(route, 200, duration)

    def end_worker(self) -> None:
        self.monitor.close()  # what the worker's exit does (atexit)

    def scrape(self) -> bytes:
        return str(self.monitor.metrics_text()).encode()


def child(side: str, directory: str, args: argparse.Namespace) -> dict[str, Any]:
    """The master (as gunicorn's): forks every worker and opens no store itself; one long-lived
    worker measures the per-request cost and answers the scrapes."""
    lib: Any = Prom(directory) if side == "prom" else Inferwatch(directory)
    main = MainWorker(lib)
    out: dict[str, Any] = {}
    out["hot_ns"], out["cpu_ns"] = main.ask("cost", args.calls)
    for _ in range(3):  # three more live workers, as with -w 4
        worker(lib, exit_by="wait")
    out["scrape_live_ms"] = main.ask("scrape", args.scrapes)
    t0 = time.perf_counter()
    for _ in range(args.restarts):
        worker(lib, exit_by="exit")
    out["restart_s"] = time.perf_counter() - t0
    out["scrape_restarts_first_ms"] = main.ask("scrape", 1)
    out["scrape_restarts_ms"] = main.ask("scrape", args.scrapes)
    for _ in range(args.restarts):
        worker(lib, exit_by="kill")
    out["scrape_kills_first_ms"] = main.ask("scrape", 1)
    out["scrape_kills_ms"] = main.ask("scrape", args.scrapes)
    out["total"] = main.ask("total", 0)
    out["files"] = len(os.listdir(directory))
    return out


class MainWorker:
    """A forked worker that records the cost workload and scrapes, on request over a pipe."""

    def __init__(self, lib: Any) -> None:
        cmd_r, self._cmd = os.pipe()
        self._res, res_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            code = 0
            try:
                lib.start_worker()
                with os.fdopen(cmd_r) as commands, os.fdopen(res_w, "w") as results:
                    for line in commands:
                        what, n = line.split()
                        results.write(json.dumps(self._answer(lib, what, int(n))) + "\n")
                        results.flush()
            except BaseException:
                code = 1
            os._exit(code)
        os.close(cmd_r)
        os.close(res_w)
        LIVE.append(self.pid)
        self._results = os.fdopen(self._res)

    @staticmethod
    def _answer(lib: Any, what: str, n: int) -> Any:
        if what == "cost":
            return cost(lib, n)
        if what == "scrape":
            return scrape_ms(lib, n)
        return count_requests(lib.scrape().decode())

    def ask(self, what: str, n: int) -> Any:
        os.write(self._cmd, f"{what} {n}\n".encode())
        line = self._results.readline()
        if not line:
            raise SystemExit(f"the main worker died answering {what}")
        return json.loads(line)


def cost(lib: Any, calls: int, rounds: int = ROUNDS) -> tuple[float, float]:
    """Median ns per request on the request thread over ``rounds`` (GC off while timing, as
    ``timeit``), and the process CPU ns per request of one more round until published."""
    work = [(ROUTES[i % 4], (i % 500) / 1000) for i in range(calls)]
    per = []
    for _ in range(rounds):
        gc.disable()
        t0 = time.perf_counter_ns()
        for route, duration in work:
            lib.record(route, duration)
        per.append((time.perf_counter_ns() - t0) / calls)
        gc.enable()
        lib.scrape()  # untimed: inferwatch aggregates and publishes; prometheus-client has written
    cpu0 = time.process_time_ns()
    for route, duration in work:
        lib.record(route, duration)
    lib.scrape()
    return statistics.median(per), (time.process_time_ns() - cpu0) / calls


def worker(lib: Any, exit_by: str) -> None:
    """Fork a worker that records PER_WORKER requests, publishes, and exits, is killed, or waits."""
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        code = 0
        try:
            lib.start_worker()
            for i in range(PER_WORKER):
                lib.record(ROUTES[i % 4], 0.004)
            if exit_by == "kill":
                lib.scrape()  # a scrape publishes: what a killed worker had published survives
                os.kill(os.getpid(), signal.SIGKILL)
            lib.end_worker() if exit_by == "exit" else lib.scrape()
            if exit_by == "wait":
                os.write(ready_w, b"1")  # published: the parent may go on
                time.sleep(3600)
        except BaseException:
            code = 1
        os._exit(code)
    os.close(ready_w)
    if exit_by == "wait":
        ok = select.select([ready_r], [], [], 120)[0] and os.read(ready_r, 1)
        os.close(ready_r)
        LIVE.append(pid)
        if not ok:
            raise SystemExit("a live worker never published")
        return
    os.close(ready_r)
    _, status = os.waitpid(pid, 0)
    if exit_by == "exit" and status != 0:
        raise SystemExit(f"a worker failed (status {status})")


LIVE: list[int] = []


def scrape_ms(lib: Any, n: int) -> float:
    took = []
    for _ in range(n):
        t0 = time.perf_counter()
        lib.scrape()
        took.append((time.perf_counter() - t0) * 1000)
    return statistics.median(took)


def count_requests(text: str) -> tuple[float, float]:
    """Requests counted, and requests the SDK's queue dropped (inferwatch only)."""
    from prometheus_client.parser import text_string_to_metric_families

    samples = [s for f in text_string_to_metric_families(text) for s in f.samples]
    return (sum(s.value for s in samples if s.name == "inferwatch_requests_total"),
            sum(s.value for s in samples if s.name == "inferwatch_sdk_dropped_total"))


# --- the parent: runs both sides, prints the table ---------------------------------------------
def run_side(side: str, args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix=f"bench-mp-{side}-") as directory:
        cmd = [sys.executable, __file__, "--child", side, "--dir", directory, "--restarts",
               str(args.restarts), "--calls", str(args.calls), "--scrapes", str(args.scrapes)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=3600, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{side} child failed:\n{done.stderr}")
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="100 restarts, fewer calls")
    p.add_argument("--restarts", type=int, default=1000)
    p.add_argument("--calls", type=int, default=50_000, help="requests per round (< 65,536)")
    p.add_argument("--scrapes", type=int, default=9)
    p.add_argument("--child", choices=("prom", "inferwatch"), help=argparse.SUPPRESS)
    p.add_argument("--dir", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        try:
            print(json.dumps(child(args.child, args.dir, args)))
        finally:
            for pid in LIVE:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        return 0
    if args.quick:
        args.restarts, args.calls, args.scrapes = 100, 20_000, 5
    iw, prom = run_side("inferwatch", args), run_side("prom", args)
    want = (ROUNDS + 1) * args.calls + PER_WORKER * (3 + 2 * args.restarts)
    print(f"workload: {(ROUNDS + 1) * args.calls} requests in one worker, 3 more live workers, "
          f"{args.restarts} restarts and {args.restarts} SIGKILLs of workers with {PER_WORKER} requests "
          f"each; expected total {want}")
    rows: list[tuple[str, str, Callable[[dict[str, Any]], float]]] = [
        ("per request, request thread", "ns", lambda r: r["hot_ns"]),
        ("per request, process CPU incl. background", "ns", lambda r: r["cpu_ns"]),
        ("scrape, 4 live workers", "ms", lambda r: r["scrape_live_ms"]),
        (f"scrape after {args.restarts} restarts (first)", "ms", lambda r: r["scrape_restarts_first_ms"]),
        (f"scrape after {args.restarts} restarts", "ms", lambda r: r["scrape_restarts_ms"]),
        (f"scrape after {args.restarts} more SIGKILLs (first)", "ms", lambda r: r["scrape_kills_first_ms"]),
        (f"scrape after {args.restarts} more SIGKILLs", "ms", lambda r: r["scrape_kills_ms"]),
    ]
    print(f"{'':48} {'inferwatch':>12} {'prom-client':>12} {'ratio':>7}")
    for name, unit, get in rows:
        a, b = get(iw), get(prom)
        print(f"{name:48} {a:>9.1f} {unit:2} {b:>9.1f} {unit:2} {a / b:>7.3f}")
    print(f"{'total requests reported':48} {iw['total'][0]:>12.0f} {prom['total'][0]:>12.0f}")
    print(f"{'dropped by the SDK queue (full)':48} {iw['total'][1]:>12.0f} {'-':>12}")
    print(f"{'files in the directory':48} {iw['files']:>12} {prom['files']:>12}")
    print(f"{'time to run the restarts':46} {iw['restart_s']:>10.1f} s {prom['restart_s']:>10.1f} s")
    peer = "prometheus-client multiprocess mode"
    _results.record("SDK overhead", "Several workers: per request, request thread", f"{iw['hot_ns']:,.1f} ns",
                    f"{peer}: {prom['hot_ns']:,.0f} ns", f"{iw['hot_ns'] / prom['hot_ns']:.3f}")
    _results.record("SDK overhead", f"Several workers: scrape after {args.restarts:,} worker restarts",
                    f"{iw['scrape_restarts_ms']:,.1f} ms", f"{peer}: {prom['scrape_restarts_ms']:,.1f} ms",
                    f"{iw['scrape_restarts_ms'] / prom['scrape_restarts_ms']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
