"""A fleet of edge devices against one ``inferwatch serve``, and the same fleet against VictoriaMetrics.

    python benchmarks/bench_fleet.py [--devices 5000] [--minutes 10] [--every 15] [--series 40] [--peer]

One real ``serve`` (SQLite store, the default pack and the edge rules, a token per device) and,
in this process, ``--devices`` simulated devices, each uploading a format-3 batch every
``--every`` seconds of wall time, phases spread evenly: ``--series`` series a device (a third
counters, a third gauges that move, a third quiet), its first batch with the labels, later ones
with ids only, the agent's report of itself (version, site, clock, backlog 0) in every batch, as
the real agent sends after its deadband. Printed every minute and at the end: the server's CPU
(seconds per second of wall time, from /proc), its resident memory, the ingest latency
(request to answer, p50 / p99 / max) and how many uploads failed or fell behind their slot; at the
end the fleet API's answer time for one sorted, filtered page.

``--peer`` then runs the same fleet against VictoriaMetrics single-node (Debian's
``victoria-metrics``), each device sending the same samples as Prometheus remote-write (snappy
protobuf, the device and site as labels, every series named in every request, as vmagent and
Prometheus send), and prints both runs' figures side by side with their ratios. The uploads go
over keep-alive connections from ``--workers`` threads (``http.client``: the generator's own CPU
is what limited the fleet before; a device in 40 by default, as each waits for its answer).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import http.client
import math
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import cramjam
import httpx
import psutil

import _results
from inferwatch.edge import AgentStats
from inferwatch.formats import REMOTE_WRITE_HEADERS, encode_columns, encode_write_request
from inferwatch.model import Labels, Sample


def serve(tmp: Path, devices: list[str]) -> tuple[subprocess.Popen[str], str]:
    cfg = tmp / "inferwatch.yml"
    tokens = "".join(f"    {d}: tok-{d}\n" for d in devices)
    cfg.write_text(f"server: {{data_dir: '{tmp / 'data'}', api_token: bench}}\n"
                   f"edge:\n  devices:\n{tokens}")
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen",
                             "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        if "listening on " in line:
            return proc, line.split("listening on ")[1].split()[0]
    raise SystemExit(f"serve did not start: {proc.wait()}")


def victoria(tmp: Path) -> tuple[subprocess.Popen[str], str]:
    """VictoriaMetrics single-node on a free loopback port, ready."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    exe = shutil.which("victoria-metrics") or "/usr/bin/victoria-metrics"
    argv = [exe, f"-httpListenAddr=127.0.0.1:{port}", f"-storageDataPath={tmp / 'vm'}", "-retentionPeriod=1d"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.2)
    raise SystemExit("victoria-metrics did not start")


class Device:
    """One simulated device: its series, its values, its batch counter."""

    def __init__(self, name: str, series: int, rng: random.Random) -> None:
        self.name, self.rng, self.seq = name, rng, 0
        self.spool = f"{rng.getrandbits(48):012x}"
        self.labels = [Labels.of(f"app_requests_{k}_total") if k % 3 == 0 else Labels.of(f"app_value_{k}")
                       for k in range(series)]
        self.values = [rng.uniform(0, 1000) for _ in range(series)]

    def body(self, now: float, peer: bool = False) -> bytes:
        self.seq += 1
        ids, samples = [], []
        for i, ls in enumerate(self.labels):
            if i % 3 == 0:
                self.values[i] += self.rng.randint(0, 50)
            elif i % 3 == 1:
                self.values[i] *= self.rng.uniform(0.8, 1.25)
            elif self.seq > 1:
                continue  # quiet: the deadband sent it once
            ids.append(i + 1)
            samples.append(Sample(ls, now, round(self.values[i], 2)))
        if peer:  # what a device sends Prometheus remote-write: labels in every request
            extra = Labels.of("x", device=self.name, site=f"site-{hash(self.name) % 25}")
            return encode_write_request(samples, extra=extra, compress=cramjam.snappy.compress_raw)
        stats = AgentStats(version="0.1.0", labels={"site": f"site-{hash(self.name) % 25}"}, sent_at=now)
        head: dict[str, object] = {"b": f"{self.spool}:{self.seq}", "hb": 300.0, "hm": 1800.0, "st": 15.0,
                                   "a": stats.to_json()}
        if self.seq == 1:
            head["defs"] = {str(i + 1): {"l": ls.to_dict(), **({"k": "c"} if i % 3 == 0 else {})}
                            for i, ls in enumerate(self.labels)}
        return encode_columns(head, ids, samples)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devices", type=int, default=5000)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--every", type=float, default=15.0, help="seconds between a device's uploads")
    ap.add_argument("--series", type=int, default=40, help="series per device")
    ap.add_argument("--workers", type=int, default=0,
                    help="uploading threads (default: a device in 40, 32 to 256: each waits for its answer, "
                         "so 32 capped a 5,000-device fleet at 32 / latency uploads a second)")
    ap.add_argument("--peer", action="store_true", help="then the same fleet against VictoriaMetrics")
    ap.add_argument("--peer-only", action="store_true", help="only the VictoriaMetrics run")
    args = ap.parse_args(argv)
    args.workers = args.workers or min(256, max(32, args.devices // 40))
    names = [f"dev-{i:05d}" for i in range(args.devices)]
    if args.peer_only:
        run(args, names, peer=True)
        return 0
    runs = {"inferwatch": run(args, names, peer=False)}
    if args.peer:
        runs["victoria-metrics"] = run(args, names, peer=True)
        iw, vm = runs["inferwatch"], runs["victoria-metrics"]
        print("\n                     inferwatch  victoria-metrics  ratio")
        for key in ("uploads/s", "answered/s", "CPU s/s", "RSS MiB", "p50 ms", "p99 ms", "max ms", "failed"):
            ratio = iw[key] / vm[key] if vm[key] else math.nan
            print(f"{key:<18} {iw[key]:>12.2f} {vm[key]:>17.2f} {ratio:>6.2f}")
        record(args, iw, vm)
    return 0


def record(args: argparse.Namespace, iw: dict[str, float], vm: dict[str, float]) -> None:
    """The RESULTS.md row of this fleet's size (its name says the fleet, never a figure of the run)."""
    asked = args.devices / args.every
    what = (f"A fleet of {args.devices:,} devices uploading every {args.every:g} s ({args.series} series a "
            f"device, {asked:,.0f} uploads/s asked; shared cores, the devices simulated on them)")

    def figures(x: dict[str, float]) -> str:
        return (f"{x['answered/s']:.0f}/s answered, {x['CPU s/s']:.2f} CPU s/s, {x['RSS MiB']:.0f} MiB, "
                f"p50 {x['p50 ms']:.1f} ms, p99 {x['p99 ms']:.0f} ms; {x['failed']:.0f} failed")

    ratios = ", ".join(f"{name} {iw[key] / vm[key]:.2f}" for name, key in
                       (("uploads", "answered/s"), ("CPU", "CPU s/s"), ("RSS", "RSS MiB"), ("p99", "p99 ms"))
                       if vm[key])
    _results.record("Edge agent", what, f"`serve`: {figures(iw)}", f"VictoriaMetrics by remote-write: "
                    f"{figures(vm)}", ratios, note=f"load {iw['load']:.0f} and {vm['load']:.0f}")


def run(args: argparse.Namespace, names: list[str], *, peer: bool) -> dict[str, float]:
    rng = random.Random(52)
    devices = [Device(n, args.series, random.Random(rng.getrandbits(32))) for n in names]
    print(f"--- {'victoria-metrics (remote-write)' if peer else 'inferwatch serve (edge ingest, format 3)'}: "
          f"{len(devices)} devices every {args.every:g} s for {args.minutes:g} min", flush=True)
    with tempfile.TemporaryDirectory(prefix="iw-fleet-") as tmp:
        proc, url = victoria(Path(tmp)) if peer else serve(Path(tmp), names)
        ps = psutil.Process(proc.pid)
        host = urllib.parse.urlsplit(url)
        path = "/api/v1/write" if peer else "/api/v1/edge/ingest"
        lat: list[float] = []
        failed = late = 0
        lock = threading.Lock()
        local = threading.local()

        def post(d: Device, body: bytes) -> bool:
            headers = dict(REMOTE_WRITE_HEADERS) if peer else {
                "Content-Encoding": "gzip", "Authorization": f"Bearer tok-{d.name}"}
            for attempt in (0, 1):  # a keep-alive connection the server closed: once more on a new one
                conn = getattr(local, "conn", None)
                if conn is None:
                    conn = local.conn = http.client.HTTPConnection(host.hostname, host.port, timeout=60)
                try:
                    conn.request("POST", path, body=body, headers=headers)
                    r = conn.getresponse()
                    r.read()
                    return r.status in (200, 204)
                except (OSError, http.client.HTTPException):
                    conn.close()
                    local.conn = None
                    if attempt:
                        return False
            return False

        def upload(d: Device, slot: float) -> None:
            nonlocal failed, late
            if time.monotonic() - slot > args.every:
                with lock:
                    late += 1
            body = d.body(time.time(), peer)
            t = time.monotonic()
            ok = post(d, body)
            with lock:
                lat.append(time.monotonic() - t)
                failed += not ok

        start = time.monotonic()
        end = start + args.minutes * 60
        cpu0, minute = sum(ps.cpu_times()[:2]), start
        with concurrent.futures.ThreadPoolExecutor(args.workers) as pool:
            k = 0
            while (slot := start + k * args.every / len(devices)) < end:
                wait = slot - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                pool.submit(upload, devices[k % len(devices)], slot)
                k += 1
                if time.monotonic() - minute >= 60:
                    minute = time.monotonic()
                    report(ps, start, cpu0, lat, failed, late, k)
        got = report(ps, start, cpu0, lat, failed, late, k)
        if not peer:
            t = time.monotonic()
            query = {"sort": "backlog", "order": "desc", "filter": "site=site-3", "per_page": 50}
            page = httpx.get(f"{url}/api/v1/edge/fleet", params=query, timeout=30)
            print(f"fleet API, one sorted filtered page of {page.json()['data']['devices']} devices: "
                  f"{1000 * (time.monotonic() - t):.0f} ms")
        proc.terminate()
        proc.wait(60)
    return got


def report(ps: psutil.Process, start: float, cpu0: float, lat: list[float], failed: int, late: int,
           sent: int) -> dict[str, float]:
    wall = time.monotonic() - start
    cpu = sum(ps.cpu_times()[:2]) - cpu0
    xs = sorted(lat)
    q = (lambda p: 1000 * xs[min(len(xs) - 1, math.floor(p * len(xs)))]) if xs else (lambda p: math.nan)
    rss = ps.memory_info().rss / 2**20
    print(f"{wall / 60:5.1f} min: {sent} uploads ({sent / wall:.0f}/s), {len(xs)} answered, "
          f"server CPU {cpu / wall:.2f} s/s, "
          f"RSS {rss:.0f} MiB, ingest latency p50 {q(0.5):.1f} ms "
          f"p99 {q(0.99):.1f} ms max {1000 * max(xs, default=math.nan):.0f} ms "
          f"(mean {1000 * statistics.fmean(xs or [math.nan]):.1f}), "
          f"{failed} failed, {late} started over a period late, load {os.getloadavg()[0]:.1f}", flush=True)
    return {"uploads/s": sent / wall, "answered/s": len(xs) / wall, "CPU s/s": cpu / wall, "RSS MiB": rss,
            "p50 ms": q(0.5), "p99 ms": q(0.99), "max ms": 1000 * max(xs, default=math.nan),
            "failed": float(failed), "load": os.getloadavg()[0]}


if __name__ == "__main__":
    sys.exit(main())
