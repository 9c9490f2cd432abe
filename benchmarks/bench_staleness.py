"""Staleness across workers: how old can a response be that a scrape still does not count?

    python benchmarks/bench_staleness.py [--seconds S] [--clients N]    (make bench BENCH=staleness)

Side by side in one run: the same WSGI app served by real gunicorn with 4 workers, counting
its requests with inferwatch's ``Monitor`` in multiprocess mode (``INFERWATCH_MULTIPROC_DIR``)
and with prometheus-client's multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``, a ``Counter``
per request). ``--clients`` threads send requests over new connections (so the kernel spreads
them over the workers) for ``--seconds``, while one thread scrapes ``/metrics`` every 50 ms.

For each scrape that started at ``s`` and reported a total ``T``: the requests whose responses
had reached the client before ``s`` are ``C(s)``; when ``T < C(s)`` the scrape missed
``C(s) - T`` of them, the oldest of which (responses in arrival order) had arrived at
``t[T]``; its staleness is ``s - t[T]`` (0 when nothing was missed). Printed: the worst and
the 99th percentile over scrapes, and how many scrapes missed anything.
"""

from __future__ import annotations

import argparse
import bisect
import os
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import httpx

import _results

APPS = {
    "inferwatch": """
        from inferwatch.sdk import Monitor

        monitor = Monitor("svc", "m", "v1")

        def _app(environ, start_response):
            body = monitor.metrics_text() if environ["PATH_INFO"] == "/metrics" else "ok"
            start_response("200 OK", [("content-type", "text/plain")])
            return [body.encode()]

        app = monitor.wsgi(_app)
        """,
    "prometheus-client": """
        from prometheus_client import CollectorRegistry, Counter, generate_latest, multiprocess

        requests = Counter("inferwatch_requests", "requests", ["route", "code"])

        def app(environ, start_response):
            if environ["PATH_INFO"] == "/metrics":
                registry = CollectorRegistry()
                multiprocess.MultiProcessCollector(registry)
                body = generate_latest(registry)
            else:
                body = b"ok"
            start_response("200 OK", [("content-type", "text/plain")])
            if environ["PATH_INFO"] != "/metrics":
                requests.labels("/predict", "200").inc()  # counted once the response is ready
            return [body]
        """,
}
SCRAPE_EVERY_S = 0.05


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _total(text: str) -> float:
    for line in text.splitlines():
        if line.startswith("inferwatch_requests_total{") and 'route="/predict"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def _get(client: httpx.Client, url: str) -> httpx.Response | None:
    try:
        return client.get(url, headers={"connection": "close"}, timeout=30)
    except httpx.TransportError:
        return None


def run_side(side: str, seconds: float, clients: int, work: Path) -> dict[str, float]:
    """Serve the side's app with gunicorn -w 4, load it, scrape it; the staleness figures."""
    (work / "app.py").write_text(textwrap.dedent(APPS[side]))
    mp = work / "mp"
    mp.mkdir()
    port = _port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work), os.environ.get("PYTHONPATH", "")]),
           "INFERWATCH_MULTIPROC_DIR" if side == "inferwatch" else "PROMETHEUS_MULTIPROC_DIR": str(mp)}
    proc = subprocess.Popen([sys.executable, "-m", "gunicorn", "-w", "4", "-b", f"127.0.0.1:{port}",
                             "app:app"], env=env, cwd=work, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client() as c:
            deadline = time.monotonic() + 60
            while _get(c, url + "/metrics") is None:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{side}: gunicorn never answered")
                time.sleep(0.1)
        return _load(url, seconds, clients)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)


def _load(url: str, seconds: float, clients: int) -> dict[str, float]:
    done: list[float] = []  # response arrival times (monotonic), appended under the GIL
    scrapes: list[tuple[float, float]] = []  # (start, total)
    took: list[float] = []  # scrape durations
    stop = time.monotonic() + seconds

    def client() -> None:
        with httpx.Client() as c:
            while time.monotonic() < stop:
                r = _get(c, url + "/predict")
                if r is not None and r.status_code == 200:
                    done.append(time.monotonic())

    def scraper() -> None:
        with httpx.Client() as c:
            while time.monotonic() < stop + 1.0:
                s = time.monotonic()
                r = _get(c, url + "/metrics")
                if r is not None and r.status_code == 200:
                    scrapes.append((s, _total(r.text)))
                    took.append(time.monotonic() - s)
                time.sleep(SCRAPE_EVERY_S)

    threads = [threading.Thread(target=client) for _ in range(clients)] + [threading.Thread(target=scraper)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    arrived = sorted(done)
    stale = []
    for s, total in scrapes:
        before = bisect.bisect_left(arrived, s)  # responses that had arrived when the scrape began
        stale.append(s - arrived[int(total)] if total < before else 0.0)
    stale.sort()
    return {"requests": len(arrived), "rate": len(arrived) / seconds, "scrapes": len(scrapes),
            "missed": sum(1 for x in stale if x > 0), "worst_ms": stale[-1] * 1000,
            "p99_ms": stale[int(0.99 * (len(stale) - 1))] * 1000,
            "scrape_ms": sorted(took)[len(took) // 2] * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--clients", type=int, default=16)
    args = ap.parse_args()
    results = {}
    for side in APPS:
        with tempfile.TemporaryDirectory() as d:
            results[side] = run_side(side, args.seconds, args.clients, Path(d))
    print(f"gunicorn -w 4, {args.clients} clients for {args.seconds:g} s, a scrape every "
          f"{SCRAPE_EVERY_S * 1000:.0f} ms (new connection per request)")
    print(f"{'':20} {'requests':>9} {'req/s':>7} {'scrapes':>8} {'missed':>7} {'worst':>10} {'p99':>10} "
          f"{'scrape p50':>11}")
    for side, r in results.items():
        print(f"{side:20} {r['requests']:9.0f} {r['rate']:7.0f} {r['scrapes']:8.0f} {r['missed']:7.0f} "
              f"{r['worst_ms']:8.1f}ms {r['p99_ms']:8.1f}ms {r['scrape_ms']:9.1f}ms")
    iw, pc = results["inferwatch"], results["prometheus-client"]
    _results.record("SDK overhead", "Several workers: staleness, the oldest response a scrape missed "
                    f"(gunicorn -w 4, {args.clients} clients, {args.seconds:g} s, a scrape every "
                    f"{SCRAPE_EVERY_S * 1000:.0f} ms)",
                    f"{iw['worst_ms']:.1f} ms worst, {iw['missed']:.0f} of {iw['scrapes']:.0f} scrapes "
                    f"missed anything; scrape p50 {iw['scrape_ms']:.1f} ms",
                    f"prometheus-client multiprocess mode: {pc['worst_ms']:.1f} ms, {pc['missed']:.0f} of "
                    f"{pc['scrapes']:.0f}; scrape p50 {pc['scrape_ms']:.1f} ms",
                    f"worst {iw['worst_ms'] / pc['worst_ms']:.2f}" if pc["worst_ms"] else
                    f"{'exact on both' if not iw['worst_ms'] else 'inferwatch stale'}; "
                    f"scrape {iw['scrape_ms'] / pc['scrape_ms']:.1f}x")


if __name__ == "__main__":
    main()
