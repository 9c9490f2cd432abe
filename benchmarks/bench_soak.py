"""Soak: ``inferwatch serve`` scraping an SDK under load plus 10k series, queried every second.

    python benchmarks/bench_soak.py [--minutes 3] [--warmup MINUTES] [--rate 1000] [--series 10000]
                                    [--head-window 10m] [--trace-memory DIR]

The issue's run is ``--minutes 30 --warmup 12 --head-window 10m`` (the store's
in-memory head fills for ``head_window``, one hour by default, so a 30-minute run
with the default measures that fill, not a leak); the default is a shortened 3 minutes.
Everything is on loopback: this process records ``--rate`` requests/s into a
``Monitor`` (its ``/metrics`` served from a thread) and serves a second target
of ``--series`` gauges with new values each scrape; ``inferwatch serve`` (a
subprocess, SQLite store, default rules, evaluation every 5 s) scrapes both
every 5 s, and one instant query a second asks it for the request rate.

Reported: the server's RSS after warm-up (``--warmup``, a quarter of the run by
default; the store's in-memory head fills for its first hour) and at the end
(target: growth under 5 %), evaluation rounds done vs scheduled (on schedule:
at least 95 %), query latency p50/p99/max and errors, scrape health.

``--trace-memory DIR`` (a diagnostic; it slows the server) starts the server
under ``tracemalloc`` and has it write, every minute, its RSS, the Python heap
traced and SQLite's own allocations (``sqlite3_memory_used``) to
``DIR/memory.jsonl`` and a snapshot to ``DIR/snap-<s>.tracemalloc``; the run
then prints the allocation sites that grew most between the first snapshot
after warm-up and the last.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil

import _results
from inferwatch.sdk import Monitor

TOKEN = "soak-token-0123456789"

# The server under --trace-memory: ``python -X tracemalloc=8 -c _PROBE DIR SECONDS serve ...``
_PROBE = """
import ctypes, json, os, sys, threading, time, tracemalloc, _sqlite3
import psutil
out, every = sys.argv[1], float(sys.argv[2])
sys.argv = ["inferwatch", *sys.argv[3:]]
lib = ctypes.CDLL(_sqlite3.__file__)  # the SQLite linked into Python (same symbols when shared)
used = lib.sqlite3_memory_used
used.restype = ctypes.c_int64
def probe():
    t0, proc = time.monotonic(), psutil.Process()
    while True:
        time.sleep(every)
        s = round(time.monotonic() - t0)
        tracemalloc.take_snapshot().dump(os.path.join(out, f"snap-{s:05d}.tracemalloc"))
        with open(os.path.join(out, "memory.jsonl"), "a") as f:
            f.write(json.dumps({"s": s, "rss": proc.memory_info().rss,
                                "python": tracemalloc.get_traced_memory()[0], "sqlite": used(),
                                "threads": threading.active_count()}) + "\\n")
threading.Thread(target=probe, daemon=True).start()
from inferwatch.cli import main
sys.exit(main())
"""


def _series_target(n: int) -> tuple[http.server.ThreadingHTTPServer, str]:
    names = [f'soak_gauge{{shard="{i % 100}",key="k{i}"}}' for i in range(n)]
    rng = random.Random(1)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = "".join(f"{name} {rng.random():.4f}\n" for name in names).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/metrics"


def _load(monitor: Monitor, rate: float, stop: threading.Event) -> int:
    """Record ``rate`` requests a second (paced in batches of 10 ms) until ``stop``; return the count."""
    sent, t0 = 0, time.monotonic()
    rng = random.Random(2)
    while not stop.is_set():
        due = int((time.monotonic() - t0) * rate)
        for _ in range(due - sent):
            monitor.record_request("/predict", 200 if rng.random() > 0.01 else 500, rng.uniform(0.005, 0.05))
        sent = due
        stop.wait(0.01)
    return sent


def _serve(tmp: Path, targets: list[str], head_window: str | None,
           trace: Path | None = None) -> tuple[subprocess.Popen[str], str]:
    cfg = tmp / "inferwatch.yml"
    lines = ",".join(f"{{job: t{i}, url: '{u}', interval: 5s, timeout: 4s}}" for i, u in enumerate(targets))
    cfg.write_text(f"server: {{data_dir: '{tmp / 'data'}', api_token: {TOKEN}, evaluation_interval: 5s}}\n"
                   f"scrape: {{targets: [{lines}]}}\n"
                   + (f"storage: {{head_window: {head_window}}}\n" if head_window else ""))
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    run = [sys.executable, "-m", "inferwatch"]
    if trace is not None:
        trace.mkdir(parents=True, exist_ok=True)
        run = [sys.executable, "-X", "tracemalloc=8", "-c", _PROBE, str(trace), "60"]
    proc = subprocess.Popen([*run, "serve", "--config", str(cfg), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    for line in proc.stderr:
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+) ", line)
        if m:
            return proc, m.group(1)
    raise RuntimeError("inferwatch serve did not start")


def _evaluations(client: httpx.Client) -> float:
    m = re.search(r"^inferwatch_rule_evaluations_total (\S+)$", client.get("/metrics").text, re.M)
    return float(m.group(1)) if m else 0.0


def _memory_report(trace: Path, warmup_s: float) -> dict[str, object]:
    """The probe's readings, and the allocation sites that grew most from warm-up to the end."""
    import tracemalloc

    rows = [json.loads(line) for line in (trace / "memory.jsonl").read_text().splitlines()]
    snaps = sorted(trace.glob("snap-*.tracemalloc"))
    warm = [p for p in snaps if int(p.stem.split("-")[1]) >= warmup_s] or snaps[-1:]
    first, last = tracemalloc.Snapshot.load(str(warm[0])), tracemalloc.Snapshot.load(str(snaps[-1]))
    top = last.compare_to(first, "lineno")[:15]
    mib = 2**20
    return {
        "readings": [f"{r['s']}s rss {r['rss'] / mib:.1f} python {r['python'] / mib:.1f} "
                     f"sqlite {r['sqlite'] / mib:.1f} MiB threads {r['threads']}" for r in rows],
        "grew_most": [f"{d.size_diff / 1024:+.0f} KiB ({d.count_diff:+d} blocks) {d.traceback[0]}"
                      for d in top],
        "snapshots": f"{warm[0].name} -> {snaps[-1].name}",
    }


def soak(minutes: float, rate: float, series: int, warmup: float | None = None,
         head_window: str | None = None, trace: Path | None = None) -> dict[str, object]:
    """Run the soak; return its figures."""
    monitor = Monitor("soak", "m", "v1")
    metrics = monitor.serve_metrics()
    gauges, gauges_url = _series_target(series)
    stop = threading.Event()
    sent: list[int] = []
    loader = threading.Thread(target=lambda: sent.append(_load(monitor, rate, stop)), daemon=True)
    loader.start()
    with tempfile.TemporaryDirectory() as tmp:
        proc, url = _serve(Path(tmp), [f"http://127.0.0.1:{metrics.port}/metrics", gauges_url], head_window,
                           trace)
        rss: list[tuple[float, int]] = []
        latencies: list[float] = []
        errors = 0
        try:
            ps = psutil.Process(proc.pid)
            with httpx.Client(base_url=url, timeout=30) as client:
                t0 = time.monotonic()
                ev0 = _evaluations(client)
                end = t0 + minutes * 60
                while (now := time.monotonic()) < end:
                    q0 = time.monotonic()
                    query = {"query": "sum(rate(inferwatch_requests_total[1m]))"}
                    r = client.get("/api/v1/query", params=query)
                    latencies.append(time.monotonic() - q0)
                    errors += r.status_code != 200
                    if not rss or now - t0 - rss[-1][0] >= 5:
                        rss.append((now - t0, ps.memory_info().rss))
                        print(f"{rss[-1][0]:.0f}s rss {rss[-1][1] / 2**20:.1f} MiB",
                              file=sys.stderr, flush=True)
                    stop.wait(max(0.0, 1.0 - (time.monotonic() - q0)))
                elapsed = time.monotonic() - t0
                evals = _evaluations(client) - ev0
                targets = client.get("/api/v1/targets").json()["data"]["activeTargets"]
        finally:
            stop.set()
            loader.join(10)
            proc.terminate()
            _, err = proc.communicate(timeout=60)
            metrics.close()
            gauges.shutdown()
            monitor.close()
    warmup_s = elapsed / 4 if warmup is None else warmup * 60
    warm = [b for t, b in rss if t >= warmup_s]
    # each end is the median of a minute of readings (12, every 5 s): the head drops its oldest
    # quarter in one step, so single readings swing by a few MiB either way
    first, last = statistics.median(warm[:12]), statistics.median(warm[-12:])
    lat = sorted(latencies)
    memory = {} if trace is None else {"memory": _memory_report(trace, warmup_s)}
    return {
        "minutes": minutes, "rate_req_s": rate, "series": series, "requests_recorded": sent[0] if sent else 0,
        "head_window": head_window or "1h (default)",
        "rss_after_warmup_mib": round(first / 2**20, 1), "rss_end_mib": round(last / 2**20, 1),
        "rss_max_after_warmup_mib": round(max(warm) / 2**20, 1),
        "rss_growth_pct": round(100 * (last - first) / first, 2),
        "evaluations": int(evals), "evaluations_scheduled": int(elapsed // 5),
        "queries": len(lat), "query_errors": errors,
        "query_p50_ms": round(1000 * statistics.median(lat), 1),
        "query_p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1),
        "query_max_ms": round(1000 * lat[-1], 1),
        "targets": {t["scrapePool"]: [t["health"], t["lastError"]] for t in targets},
        "server_tracebacks": err.count("Traceback"),
        **memory,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=3.0)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--series", type=int, default=10_000)
    ap.add_argument("--warmup", type=float, default=None, help="minutes (default: a quarter of the run)")
    ap.add_argument("--head-window", default=None,
                    help="the server's storage.head_window (default 1h: RSS rises for the first hour)")
    ap.add_argument("--trace-memory", type=Path, default=None, metavar="DIR",
                    help="diagnostic: run the server under tracemalloc, write readings and snapshots to DIR "
                         "every minute and print what grew after warm-up (slows the server)")
    args = ap.parse_args(argv)
    out = soak(args.minutes, args.rate, args.series, args.warmup, args.head_window, args.trace_memory)
    print(json.dumps(out, indent=2))
    growth_ok = float(out["rss_growth_pct"]) < 5.0  # type: ignore[arg-type]
    on_time = int(out["evaluations"]) >= 0.95 * int(out["evaluations_scheduled"])  # type: ignore[call-overload]
    print(f"target: RSS growth < 5 % after warm-up -> {out['rss_growth_pct']} % "
          f"{'OK' if growth_ok else 'MISSED'}; "
          f"evaluation on schedule (>= 95 %) -> {out['evaluations']}/{out['evaluations_scheduled']} "
          f"{'OK' if on_time else 'MISSED'}")
    if not out["server_tracebacks"]:
        _results.record("Hostile input, faults and load",
                        f"Soak ({args.rate:,.0f} req/s, {args.series:,}-series target): "
                        "RSS growth after warm-up",
                        f"{float(out['rss_growth_pct']):+.2f} %",  # type: ignore[arg-type]
                        "the < 5 % target", None,
                        note=f"{args.minutes:g} minutes; evaluations {out['evaluations']}/"
                             f"{out['evaluations_scheduled']} on schedule")
    return 0 if growth_ok and on_time and not out["server_tracebacks"] else 1


if __name__ == "__main__":
    sys.exit(main())
