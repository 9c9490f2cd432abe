"""Scrape-to-store ingest: inferwatch's scrape loop into the SQLite store vs Prometheus 2.42.

    python benchmarks/bench_ingest.py [--series 100000] [--scrapes 6] [--rounds 5]
                                      [--prometheus /usr/bin/prometheus]

One loopback target (a separate process) exposes N series in the text format,
with new values on every request (pre-rendered, so the target's own speed
does not count). Each round is a fresh first scrape for both systems, then
warm ones. inferwatch: a fresh interpreter (so nothing it learnt in an earlier
round helps) runs ``ScrapeLoop.scrape_once`` on a simulated clock (15 s apart)
into a new ``SQLiteStore`` in a temp dir; each scrape is timed from the HTTP
request to the committed transaction, with its CPU time, and the rate is
samples / wall time. Prometheus: a fresh process and data directory scraping
the same target every 5 s; its rate per scrape is ``scrape_samples_scraped /
scrape_duration_seconds`` (its own timing of fetch, parse and append: the
commit of its WAL comes after that timing), read for every scrape once it has
made ``--scrapes`` of them; its first scrape (every series new) is the first.
The rounds alternate which system goes first. Reported: the median of the
rounds and their range, and the median of the per-round ratios. Target: >=
100,000 samples/s, and >= Prometheus's rate warm and on the first scrape. The
garbage collector is set as ``inferwatch serve`` sets it (``gc.freeze``, a
young pass per 50,000 new objects: ``server/_serve.py``; a target's first
scrape with the collector paused and its objects frozen: ``NewSeriesGc`` in
``server/_wiring.py``), since the scrape loop runs there; ``--default-gc``
keeps Python's defaults.
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
from inferwatch.server.ingest import NewSeriesGc
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


def bench_inferwatch(port: int, n: int, scrapes: int, tmp: Path, *,
                     serve_gc: bool = True) -> dict[str, float]:
    """Scrape ``scrapes`` times into SQLite; per-scrape wall time from request to commit."""
    clock = SimulatedClock(1.7e9)
    store = SQLiteStore(tmp / "tsdb.sqlite", clock=clock)
    target = ScrapeTarget(job="bench", url=f"http://127.0.0.1:{port}/metrics", interval=15.0, timeout=15.0)
    loop = ScrapeLoop([target], store, clock=clock, new_series_gc=NewSeriesGc() if serve_gc else None)
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


def inferwatch_round(port: int, n: int, scrapes: int, default_gc: bool) -> dict[str, float]:
    """:func:`bench_inferwatch` in a fresh interpreter (``--one-round``), its figures as JSON."""
    cmd = [sys.executable, __file__, "--one-round", str(port), "--series", str(n), "--scrapes", str(scrapes),
           *(["--default-gc"] if default_gc else [])]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"inferwatch round failed: {out.stderr[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return str(r.read().decode())


def _metric(text: str, name: str) -> float | None:
    m = re.search(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def _values(pport: int, metric: str) -> list[float]:
    """Every sample of ``metric{job="bench"}`` in the last hour, oldest first."""
    q = urllib.parse.quote(f'{metric}{{job="bench"}}[1h]')
    found = json.loads(_get(f"http://127.0.0.1:{pport}/api/v1/query?query={q}"))["data"]["result"]
    return [float(v) for _, v in found[0]["values"]] if found else []


def bench_prometheus(binary: str, port: int, tmp: Path, scrapes: int, timeout: float) -> dict[str, float]:
    """A fresh Prometheus scraping the same target every 5 s until it has made ``scrapes`` scrapes:
    its own timing of the first and the median rate of the others."""
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
        deadline = time.monotonic() + timeout
        durations: list[float] = []
        while time.monotonic() < deadline:
            time.sleep(1.0)
            try:
                durations = _values(pport, "scrape_duration_seconds")
                samples = _values(pport, "scrape_samples_scraped")
                up = _values(pport, "up")
            except OSError:
                continue
            if len(durations) >= scrapes and len(samples) == len(durations) == len(up):
                break
        else:
            raise TimeoutError(f"prometheus made {len(durations)} of {scrapes} scrapes before the deadline")
        if not all(up[:scrapes]):
            raise RuntimeError(f"a prometheus scrape failed (up: {up[:scrapes]})")
        appended = _metric(_get(f"http://127.0.0.1:{pport}/metrics"),
                           "prometheus_tsdb_head_samples_appended_total") or 0.0
        rates = [n / d for n, d in zip(samples[:scrapes], durations[:scrapes], strict=True)]
        return {"rate": statistics.median(rates[1:]), "first_s": durations[0], "first_rate": rates[0],
                "appended": appended}
    finally:
        _stop(prom)  # type: ignore[arg-type]


def _spread(xs: list[float], fmt: str = ",.0f") -> str:
    return f"{statistics.median(xs):{fmt}} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--series", type=int, default=100_000)
    ap.add_argument("--scrapes", type=int, default=6, help="scrapes a round: the first, then warm ones")
    ap.add_argument("--rounds", type=int, default=5, help="rounds, each a fresh first scrape for both")
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    ap.add_argument("--default-gc", action="store_true",
                    help="keep Python's garbage-collector settings (serve's are used otherwise)")
    ap.add_argument("--one-round", type=int, metavar="PORT", help=argparse.SUPPRESS)  # a child's round
    args = ap.parse_args(argv)
    if args.one_round is not None:
        if not args.default_gc:  # as inferwatch serve sets it (server/_serve.py _tune_gc)
            gc.freeze()
            gc.set_threshold(50_000, 20, 20)
        with tempfile.TemporaryDirectory() as d:
            print(json.dumps(bench_inferwatch(args.one_round, args.series, args.scrapes, Path(d),
                                              serve_gc=not args.default_gc)))
        return 0
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    peer = os.access(args.prometheus, os.X_OK)
    iw: list[dict[str, float]] = []
    pr: list[dict[str, float]] = []
    target, port = _start_target(args.series)
    try:
        for r in range(args.rounds):
            order = ["iw", "pr"] if r % 2 == 0 else ["pr", "iw"]
            for who in order:
                if who == "iw":
                    iw.append(inferwatch_round(port, args.series, args.scrapes, args.default_gc))
                elif peer:
                    with tempfile.TemporaryDirectory() as d:
                        pr.append(bench_prometheus(args.prometheus, port, Path(d), args.scrapes,
                                                   timeout=30 + 10 * args.scrapes))
            a = iw[-1]
            line = (f"round {r + 1}: inferwatch first {a['cold_rate']:,.0f}/s ({a['cold_s'] * 1e3:.0f} ms, "
                    f"CPU {a['cold_cpu_s'] * 1e3:.0f} ms), warm {a['rate']:,.0f}/s "
                    f"({a['warm_s'] * 1e3:.0f} ms, CPU {a['warm_cpu_s'] * 1e3:.0f} ms)")
            if peer:
                b = pr[-1]
                line += (f"; prometheus first {b['first_rate']:,.0f}/s ({b['first_s'] * 1e3:.0f} ms), "
                         f"warm {b['rate']:,.0f}/s; ratio first {a['cold_rate'] / b['first_rate']:.2f}, "
                         f"warm {a['rate'] / b['rate']:.2f}")
            print(line + f"; load {os.getloadavg()[0]:.1f}", flush=True)
    finally:
        _stop(target)
    load = f"load average {os.getloadavg()[0]:.1f}"
    first, warm = [a["cold_rate"] for a in iw], [a["rate"] for a in iw]
    cpu_first = [a["cold_cpu_s"] * 1e3 for a in iw]
    print(f"\nscrape-to-store ingest, one target with {args.series:,} series ({os.cpu_count()} CPUs), "
          f"{len(iw)} rounds: median (min–max)")
    print(f"inferwatch (SQLite), first scrape: {_spread(first)} samples/s, CPU {_spread(cpu_first)} ms")
    print(f"inferwatch (SQLite), warm scrapes: {_spread(warm)} samples/s, "
          f"CPU {_spread([a['warm_cpu_s'] * 1e3 for a in iw])} ms")
    rounds = f"median of {len(iw)} rounds"
    peer_first = peer_warm = None
    ratio_first = ratio_warm = None
    if pr:
        p_first, p_warm = [b["first_rate"] for b in pr], [b["rate"] for b in pr]
        r_first = [a / b for a, b in zip(first, p_first, strict=True)]
        r_warm = [a / b for a, b in zip(warm, p_warm, strict=True)]
        print(f"prometheus 2.42, first scrape (own timing): {_spread(p_first)} samples/s")
        print(f"prometheus 2.42, warm scrapes (own timing): {_spread(p_warm)} samples/s "
              f"(head samples appended in the last round: {pr[-1]['appended']:,.0f})")
        print(f"ratio inferwatch / prometheus, per round: first scrape {_spread(r_first, '.2f')}, "
              f"warm {_spread(r_warm, '.2f')}")
        peer_first = f"Prometheus 2.42, its own timing of its first scrape: {_spread(p_first)} samples/s"
        peer_warm = f"Prometheus 2.42, its own timing: {_spread(p_warm)} samples/s"
        ratio_first = f"{statistics.median(r_first):.2f} ({min(r_first):.2f}–{max(r_first):.2f} per round)"
        ratio_warm = f"{statistics.median(r_warm):.2f} ({min(r_warm):.2f}–{max(r_warm):.2f} per round)"
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    verdict = "meets" if statistics.median(warm) >= 100_000 else "MISSES"
    print(f"target >= 100,000 samples/s: inferwatch {verdict} it ({statistics.median(warm):,.0f})")
    _results.record("Ingest", f"Scrape to store, {args.series:,} series, warm scrapes",
                    f"{_spread(warm)} samples/s", peer_warm, ratio_warm,
                    note=f"{rounds}; first scrape {statistics.median(first):,.0f}; {load}")
    _results.record("Ingest", f"Scrape to store, {args.series:,} series, first scrape (all new)",
                    f"{_spread(first)} samples/s", peer_first, ratio_first,
                    note=f"{rounds}, each a fresh process; CPU {_spread(cpu_first)} ms; "
                         f"{'default' if args.default_gc else 'serve'} GC settings; {load}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
