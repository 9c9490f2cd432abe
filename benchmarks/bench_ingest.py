"""Scrape-to-store ingest: inferwatch's scrape loop into the SQLite store vs Prometheus 2.42.

    python benchmarks/bench_ingest.py [--series 100000] [--scrapes 8] [--prometheus /usr/bin/prometheus]

One loopback target (a separate process) exposes N series in the text format,
with new values on every request (pre-rendered, so the target's own speed
does not count). inferwatch: ``ScrapeLoop.scrape_once`` on
a simulated clock (15 s apart) into a ``SQLiteStore`` in a temp dir; each
scrape is timed from the HTTP request to the committed transaction, and the
rate is samples / wall time (cold first scrape reported apart). Prometheus:
the same target scraped every 5 s; its rate is ``scrape_samples_scraped /
scrape_duration_seconds`` (its own timing of fetch + parse + append), and the
growth of ``prometheus_tsdb_head_samples_appended_total`` confirms the samples
went in; its first scrape (every series new) is the first sample of its
``scrape_duration_seconds``. Target: >= 100,000 samples/s, and >= Prometheus's rate warm and
on the first scrape. The garbage collector is set as ``inferwatch serve`` sets it (``gc.freeze``, a
young pass per 50,000 new objects: ``server/_serve.py``), since the scrape loop runs there;
``--default-gc`` keeps Python's defaults.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.parse
import urllib.request
from pathlib import Path

import _results
from inferwatch.config import ScrapeTarget
from inferwatch.model import SimulatedClock
from inferwatch.server import ScrapeLoop
from inferwatch.store import SQLiteStore

TARGET = textwrap.dedent('''
    import http.server, sys
    n = int(sys.argv[1])
    names = [f'inferwatch_requests_total{{service="svc{i % 1000:04d}",model="m",version="1",'
             f'route="/predict",code="{200 + i // 1000}"}}' for i in range(n)]
    # Pre-rendered bodies with different values, served in turn: the timing measures the
    # scraper, not how fast this Python target can format 100k lines.
    bodies = ["".join(f"{name} {k * 10 + j % 7}\\n" for j, name in enumerate(names)).encode()
              for k in range(4)]
    count = [0]
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            count[0] += 1
            body = bodies[count[0] % len(bodies)]
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
''')


def _start_target(n: int) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen([sys.executable, "-c", TARGET, str(n)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def _stop(proc: subprocess.Popen[str] | None) -> None:
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def bench_inferwatch(port: int, n: int, scrapes: int, tmp: Path) -> dict[str, float]:
    """Scrape ``scrapes`` times into SQLite; per-scrape wall time from request to commit."""
    clock = SimulatedClock(1.7e9)
    store = SQLiteStore(tmp / "tsdb.sqlite", clock=clock)
    target = ScrapeTarget(job="bench", url=f"http://127.0.0.1:{port}/metrics", interval=15.0, timeout=15.0)
    loop = ScrapeLoop([target], store, clock=clock)
    times, cpu = [], []
    for _ in range(scrapes):
        t0, c0 = time.perf_counter(), time.process_time()
        loop.scrape_once(clock.now())
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        assert loop.targets()[0].health == "up", loop.targets()[0].last_error
        clock.advance(15.0)
    appended = store.stats.appended
    loop.stop()
    store.close()
    per_scrape = n + 5  # the series plus up and the four scrape_* series
    assert appended == per_scrape * scrapes, (appended, per_scrape * scrapes)
    warm = statistics.median(times[1:])
    return {"cold_s": times[0], "warm_s": warm, "rate": per_scrape / warm, "cold_rate": per_scrape / times[0],
            "cold_cpu_s": cpu[0], "warm_cpu_s": statistics.median(cpu[1:])}


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return str(r.read().decode())


def _metric(text: str, name: str) -> float | None:
    m = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def _first_duration(pport: int) -> float:
    """Prometheus's own timing of its first scrape: the oldest sample of ``scrape_duration_seconds``."""
    q = urllib.parse.quote('scrape_duration_seconds{job="bench"}[1h]')
    found = json.loads(_get(f"http://127.0.0.1:{pport}/api/v1/query?query={q}"))["data"]["result"]
    return float(found[0]["values"][0][1]) if found else float("nan")


def bench_prometheus(binary: str, port: int, tmp: Path, deadline: float) -> dict[str, float]:
    """Prometheus scraping the same target every 5 s: its samples per second of scrape time."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        pport = s.getsockname()[1]
    (tmp / "prometheus.yml").write_text(textwrap.dedent(f"""
        global: {{scrape_interval: 5s, scrape_timeout: 5s}}
        scrape_configs:
          - job_name: bench
            static_configs: [{{targets: ["127.0.0.1:{port}"]}}]
    """))
    prom = subprocess.Popen(
        [binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'pdata'}",
         f"--web.listen-address=127.0.0.1:{pport}"],
        stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"),  # noqa: SIM115
    )
    try:
        rates: list[float] = []
        first_appended: float | None = None
        appended = 0.0
        seen: set[float] = set()
        while len(rates) < 6 and time.monotonic() < deadline:
            time.sleep(1.0)
            try:
                q = _get(f"http://127.0.0.1:{pport}/api/v1/query?query="
                         "scrape_samples_scraped%2Fscrape_duration_seconds%20and%20up%3D%3D1")
                own = _get(f"http://127.0.0.1:{pport}/metrics")
            except OSError:
                continue
            m = re.search(r'"value":\[([0-9.]+),"([0-9.e+]+)"\]', q)
            head = _metric(own, "prometheus_tsdb_head_samples_appended_total")
            if head is not None:
                first_appended = head if first_appended is None else first_appended
                appended = head - first_appended
            if m and float(m.group(1)) not in seen:
                seen.add(float(m.group(1)))
                rates.append(float(m.group(2)))
        if not rates:
            raise TimeoutError("prometheus reported no successful scrape before the deadline")
        rate = statistics.median(rates[1:] or rates)
        first = _first_duration(pport)
        return {"rate": rate, "readings": float(len(rates)), "appended": appended, "first_s": first}
    finally:
        _stop(prom)  # type: ignore[arg-type]


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--series", type=int, default=100_000)
    ap.add_argument("--scrapes", type=int, default=8)
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    ap.add_argument("--default-gc", action="store_true",
                    help="keep Python's garbage-collector settings (serve's are used otherwise)")
    args = ap.parse_args(argv)
    if not args.default_gc:  # as inferwatch serve sets it (server/_serve.py _tune_gc)
        gc.freeze()
        gc.set_threshold(50_000, 20, 20)
    deadline = time.monotonic() + 240
    target, port = _start_target(args.series)
    try:
        with tempfile.TemporaryDirectory() as d:
            iw = bench_inferwatch(port, args.series, args.scrapes, Path(d))
            pr = None
            if os.access(args.prometheus, os.X_OK):
                try:
                    pr = bench_prometheus(args.prometheus, port, Path(d), deadline)
                except TimeoutError as exc:
                    print(f"prometheus: {exc}")
    finally:
        _stop(target)
    print(f"\nscrape-to-store ingest, one target with {args.series:,} series ({os.cpu_count()} CPUs)")
    print(f"{'engine':<34}{'samples/s':>14}{'per scrape':>14}{'CPU':>10}")
    print(f"{'inferwatch (SQLite), warm scrapes':<34}{iw['rate']:>14,.0f}{iw['warm_s'] * 1e3:>11.0f} ms"
          f"{iw['warm_cpu_s'] * 1e3:>7.0f} ms")
    print(f"{'inferwatch (SQLite), first scrape':<34}{iw['cold_rate']:>14,.0f}{iw['cold_s'] * 1e3:>11.0f} ms"
          f"{iw['cold_cpu_s'] * 1e3:>7.0f} ms")
    if pr is not None:
        per_ms = args.series / pr["rate"] * 1e3
        first_rate = args.series / pr["first_s"]
        print(f"{'prometheus 2.42 (own timing)':<34}{pr['rate']:>14,.0f}{per_ms:>11.0f} ms")
        print(f"{'prometheus 2.42, first scrape':<34}{first_rate:>14,.0f}{pr['first_s'] * 1e3:>11.0f} ms")
        print(f"ratio inferwatch / prometheus: {iw['rate'] / pr['rate']:.2f} warm, "
              f"{iw['cold_rate'] / first_rate:.2f} first scrape "
              f"(prometheus head samples appended during the run: {pr['appended']:,.0f})")
    verdict = "meets" if iw["rate"] >= 100_000 else "MISSES"
    print(f"target >= 100,000 samples/s: inferwatch {verdict} it ({iw['rate']:,.0f})")
    _results.record("Ingest", f"Scrape to store, {args.series:,} series, warm scrapes",
                    f"{iw['rate']:,.0f} samples/s",
                    f"Prometheus 2.42, its own timing: {pr['rate']:,.0f} samples/s" if pr else None,
                    f"{iw['rate'] / pr['rate']:.2f}" if pr else None,
                    note=f"first scrape {iw['cold_rate']:,.0f}; load average {os.getloadavg()[0]:.1f}")
    first_peer = args.series / pr["first_s"] if pr else None
    _results.record("Ingest", f"Scrape to store, {args.series:,} series, first scrape (all new)",
                    f"{iw['cold_rate']:,.0f} samples/s",
                    f"Prometheus 2.42, its own timing of its first scrape: {first_peer:,.0f} samples/s"
                    if first_peer else None,
                    f"{iw['cold_rate'] / first_peer:.2f}" if first_peer else None,
                    note=f"{'default' if args.default_gc else 'serve'} GC settings; "
                         f"load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
