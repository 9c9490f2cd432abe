"""Collection and exporter cost: inferwatch against Debian's prometheus-node-exporter.

    python benchmarks/bench_collect.py [--scrapes N] [--rounds N]

Side by side in one run, on this host:
1. the cost of one in-process collection (host + process + GPU collectors;
   the GPU collector on a 1-GPU FakeNVML and, separately, on the real NVML
   binding, which is off here without a driver): wall and CPU milliseconds;
2. ``inferwatch exporter`` and ``prometheus-node-exporter`` (all default
   collectors, and only cpu+meminfo+loadavg, which is what inferwatch's host
   collector covers) started on loopback ports, each scraped N times in turn:
   scrape latency (median, p95), server CPU per scrape, resident memory, series
   per scrape. node_exporter collects on every scrape; inferwatch collects on a
   timer (collect.interval) and a scrape renders the latest batch, so its per-
   scrape cost excludes collection; part 1 gives that cost separately.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import httpx
import psutil

import _results
from inferwatch.collect import (
    CollectLoop,
    FakeGPU,
    FakeNVML,
    GcStats,
    GpuCollector,
    HostCollector,
    ProcessCollector,
)

NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
START_TIMEOUT_S = 20.0


def one_collection_ms(loop: CollectLoop, n: int) -> tuple[float, float]:
    """Median wall ms and mean CPU ms of ``loop.tick()``."""
    walls, cpu0 = [], time.process_time()
    for _ in range(n):
        t0 = time.perf_counter()
        loop.tick()
        walls.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(walls), (time.process_time() - cpu0) * 1e3 / n


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(argv: list[str], url: str) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"{argv[0]} did not answer {url} within {START_TIMEOUT_S:g}s")


def scrape_stats(url: str, proc: subprocess.Popen[bytes], n: int) -> dict[str, float]:
    ps = psutil.Process(proc.pid)
    client = httpx.Client(timeout=10)
    body = client.get(url).text  # warm-up
    cpu0 = sum(ps.cpu_times()[:2])
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        body = client.get(url).text
        lat.append((time.perf_counter() - t0) * 1e3)
    cpu = sum(ps.cpu_times()[:2]) - cpu0
    client.close()
    series = sum(1 for line in body.splitlines() if line and not line.startswith("#"))
    return {
        "p50": statistics.median(lat), "p95": sorted(lat)[int(0.95 * (n - 1))],
        "cpu_ms": cpu * 1e3 / n, "rss_mib": ps.memory_info().rss / 2**20, "series": series,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scrapes", type=int, default=200)
    ap.add_argument("--collections", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=1, help="start every exporter afresh N times")
    args = ap.parse_args()

    stats = GcStats().install()
    fake = CollectLoop([HostCollector(), ProcessCollector(gc_stats=stats),
                        GpuCollector(nvml=FakeNVML([FakeGPU()]), hostname="h")], interval=15)
    real = CollectLoop([HostCollector(), ProcessCollector(gc_stats=stats), GpuCollector(hostname="h")],
                       interval=15)
    print(f"one collection ({args.collections} runs, in-process):")
    collect_cpu = 0.0
    for name, loop in (("host+process+gpu (FakeNVML, 1 GPU)", fake), ("host+process+gpu (real NVML)", real)):
        wall, cpu = one_collection_ms(loop, args.collections)
        print(f"  {name:<38} wall {wall:6.3f} ms   cpu {cpu:6.3f} ms   {len(loop.snapshot())} samples")
        collect_cpu = cpu  # the last row is what `inferwatch exporter` runs on this host
    stats.uninstall()

    if not shutil.which(NODE_EXPORTER):
        print(f"{NODE_EXPORTER} not installed: apt-get install prometheus-node-exporter", file=sys.stderr)
        return 1
    peers: list[tuple[str, Callable[[int], list[str]]]] = [
        ("inferwatch exporter", lambda p: [sys.executable, "-m", "inferwatch", "exporter", "--port", str(p)]),
        ("node_exporter (defaults)", lambda p: [NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{p}"]),
        ("node_exporter (cpu,meminfo,loadavg)", lambda p: [
            NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{p}", "--collector.disable-defaults",
            "--collector.cpu", "--collector.meminfo", "--collector.loadavg"]),
    ]
    runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in peers}
    for _ in range(args.rounds):
        for name, argv in peers:
            port = free_port()
            url = f"http://127.0.0.1:{port}/metrics"
            proc = start(argv(port), url)
            try:
                runs[name].append(scrape_stats(url, proc, args.scrapes))
            finally:
                proc.terminate()
                proc.wait(timeout=10)
    rows = [(name, {k: statistics.median(r[k] for r in runs[name]) for k in runs[name][0]})
            for name, _ in peers]
    print(f"\nexporters, {args.scrapes} scrapes each on loopback, {args.rounds} round(s), "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}:")
    print(f"  {'':<38}{'p50 ms':>8}{'p95 ms':>8}{'CPU ms/scrape':>15}{'RSS MiB':>9}{'series':>8}  RSS range")
    for name, r in rows:
        rss = [x["rss_mib"] for x in runs[name]]
        print(f"  {name:<38}{r['p50']:8.2f}{r['p95']:8.2f}{r['cpu_ms']:15.2f}{r['rss_mib']:9.1f}"
              f"{r['series']:8.0f}  {min(rss):.1f}-{max(rss):.1f}")
    iw = rows[0][1]
    print(f"  (inferwatch collecting on every scrape would add {collect_cpu:.2f} ms CPU: "
          f"{iw['cpu_ms'] + collect_cpu:.2f} ms/scrape)")
    first = peers[0][0]
    for name, r in rows[1:]:
        ratios = [a["rss_mib"] / b["rss_mib"] for a, b in zip(runs[first], runs[name], strict=True)]
        print(f"  ratio inferwatch / {name}: p50 {iw['p50'] / r['p50']:.2f}x, "
              f"CPU {iw['cpu_ms'] / r['cpu_ms']:.2f}x, RSS {statistics.median(ratios):.2f}x "
              f"({min(ratios):.2f}-{max(ratios):.2f} over the rounds)")
    _record(rows, runs)
    return 0


def _record(rows: list[tuple[str, dict[str, float]]],
            runs: dict[str, list[dict[str, float]]]) -> None:
    """The three exporter rows of RESULTS.md, against node_exporter with the same collectors."""
    (ours_name, iw), peers = rows[0], dict(rows[1:])
    same = next((n for n in peers if "cpu,meminfo" in n), None)
    if same is None:
        for what in ("Exporter CPU per scrape", "Exporter scrape p50", "Exporter resident memory"):
            _results.record("Host and GPU collection", what, "–", None, None)
        return
    ne, dflt = peers[same], peers.get("node_exporter (defaults)")
    rss = [a["rss_mib"] / b["rss_mib"] for a, b in zip(runs[ours_name], runs[same], strict=True)]
    area = "Host and GPU collection"
    _results.record(area, "Exporter CPU per scrape", f"{iw['cpu_ms']:.2f} ms",
                    f"{same}: {ne['cpu_ms']:.2f} ms"
                    + (f"; defaults {dflt['cpu_ms']:.2f} ms" if dflt else ""),
                    f"{iw['cpu_ms'] / ne['cpu_ms']:.2f}")
    _results.record(area, "Exporter scrape p50", f"{iw['p50']:.2f} ms", f"{same}: {ne['p50']:.2f} ms",
                    f"{iw['p50'] / ne['p50']:.2f}")
    _results.record(area, "Exporter resident memory", f"{iw['rss_mib']:.1f} MiB",
                    f"{same}: {ne['rss_mib']:.1f} MiB",
                    f"{statistics.median(rss):.2f} ({min(rss):.2f}–{max(rss):.2f} over {len(rss)} rounds)")


if __name__ == "__main__":
    sys.exit(main())
