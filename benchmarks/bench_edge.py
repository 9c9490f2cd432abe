"""The edge agent: bytes on the wire against the naive upload, reconstruction error, agent RSS and CPU.

    python benchmarks/bench_edge.py [--nab DIR] [--rounds N]

1. Delta reporting over NAB's realKnownCause and realAWSCloudwatch files, replayed as device
   metrics: each folder is one device whose series are the folder's files, all batched
   together (one gzip'ed ingest batch per minute of sample time, the agent's encoder); the
   naive upload sends every point with the same batching and compression. Default deadband
   (10 %, floor 0.01) with the 5-minute heartbeat. Three replays:
     (a) each NAB point is one collection of a device collecting every 15 s (the headline);
     (b) NAB's 5-minute values as a device collecting every 15 s sees them (each value held
         for its 5 minutes: 20 collections per NAB point);
     (c) the files' own 5-minute timestamps (every point is a heartbeat: no saving possible).
   Errors: |true - reconstructed| / max(|reconstructed|, floor), reconstructed as the server
   does (the last sent value holds); at most the deadband by construction.
2. A real `inferwatch edge` process scraping a local endpoint of 1,000 series once a second
   and uploading to a local receiver: resident memory and CPU seconds per 1,000 samples read.
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from inferwatch.edge import DeadbandSettings, SimulationResult, read_series_csv, simulate_device

ROOT = Path(__file__).resolve().parents[1]
NAB = ROOT.parent / "shared" / "data" / "nab"
FOLDERS = ("realKnownCause", "realAWSCloudwatch")
STEP = 15.0


def _replay(points: Sequence[tuple[float, float]], mode: str) -> list[tuple[float, float]]:
    t0 = points[0][0]
    if mode == "a":
        return [(t0 + i * STEP, v) for i, (_, v) in enumerate(points)]
    if mode == "b":
        return [(t0 + (20 * i + k) * STEP, v) for i, (_, v) in enumerate(points) for k in range(20)]
    return list(points)


def _row(name: str, r: SimulationResult) -> str:
    return (f"   {name:<48} {r.points:>8} {r.sent:>7} {r.bytes_naive:>10} {r.bytes_sent:>9} "
            f"{r.reduction:>8.1%} {r.max_rel_error:>8.4f}")


def reduction(nab: Path) -> None:
    settings = DeadbandSettings()
    head = (f"   {'series':<48} {'points':>8} {'sent':>7} {'naive B':>10} {'sent B':>9} {'fewer':>8} "
            f"{'max err':>8}")
    for mode, title in (("a", "(a) one NAB point per 15 s collection"),
                        ("b", "(b) NAB values held, collected every 15 s"),
                        ("c", "(c) the files' own 5-minute timestamps")):
        print(f"\n1{mode}. {title}")
        print(head)
        naive = sent = 0
        worst = 0.0
        for folder in FOLDERS:
            files = sorted((nab / folder).glob("*.csv"))
            series = {f.stem: _replay(read_series_csv(f), mode) for f in files}
            if mode == "a":
                for name, pts in series.items():
                    print(_row(f"{folder}/{name}"[:48], simulate_device({name: pts}, settings)))
            dev = simulate_device(series, settings)
            print(_row(f"{folder} (one device, {len(files)} series)", dev))
            naive, sent, worst = naive + dev.bytes_naive, sent + dev.bytes_sent, max(worst, dev.max_rel_error)
        fewer = 1 - sent / naive
        print(f"   TOTAL {naive} -> {sent} bytes: {fewer:.1%} fewer; max relative error {worst:.4f} "
              f"(deadband {settings.band}); target >= 90 % fewer: {'OK' if fewer >= 0.9 else 'MISSED'}")


class _Endpoints:
    """A /metrics of 1,000 random-walk gauges, and an ingest receiver that answers 200."""

    def __init__(self, series: int, seed: int = 18) -> None:
        self.rng = random.Random(seed)
        self.values = [100.0] * series
        self.scrapes = self.batches = 0
        self.received = 0
        me = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                me.scrapes += 1
                me.values = [v * (1 + me.rng.gauss(0, 0.03)) for v in me.values]
                body = "".join(f'app_gauge{{i="{i}"}} {v:.4f}\n' for i, v in enumerate(me.values)).encode()
                self._answer(body)

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                me.received += len(self.rfile.read(n))
                me.batches += 1
                self._answer(b'{"status": "success"}')

            def _answer(self, body: bytes) -> None:
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _proc_stats(pid: int) -> tuple[float, int]:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    rss = next(int(line.split()[1]) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
               if line.startswith("VmRSS:"))
    return cpu, rss * 1024


def footprint(rounds: int, series: int = 1000) -> None:
    ep = _Endpoints(series)
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "edge.yml"
        cfg.write_text(json.dumps({
            "device": "bench", "spool": {"path": "spool.sqlite"},
            "upload": {"url": ep.url, "token": "bench", "interval": "1s"},
            "sources": [{"type": "scrape", "url": f"{ep.url}/metrics", "interval": "1s"}],
        }))
        proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "edge", "--config", str(cfg)],
                                stderr=subprocess.PIPE, text=True)
        assert proc.stderr is not None
        proc.stderr.readline()  # started
        start_cpu, start_rss = _proc_stats(proc.pid)
        first = ep.scrapes
        done = threading.Event()
        peak = [start_rss]

        def watch() -> None:
            while not done.wait(0.2):
                peak[0] = max(peak[0], _proc_stats(proc.pid)[1])
                if ep.scrapes - first >= rounds:
                    done.set()

        th = threading.Thread(target=watch)
        th.start()
        th.join(rounds * 5 + 60)
        cpu, _rss = _proc_stats(proc.pid)
        n = ep.scrapes - first
        proc.terminate()
        proc.wait(20)
    print(f"\n2. a real `inferwatch edge` process: {series} series scraped once a second, {n} rounds")
    print(f"   resident memory after start {start_rss / 2**20:.1f} MiB, peak {peak[0] / 2**20:.1f} MiB "
          f"(target < 30 MiB: {'OK' if peak[0] < 30 * 2**20 else 'MISSED'})")
    print(f"   CPU {1000 * (cpu - start_cpu) / (n * series) * 1000:.1f} ms per 1,000 samples read "
          f"(scrape parse, deadband, spool, gzip upload); {ep.batches} batches, {ep.received} bytes sent")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nab", type=Path, default=NAB if NAB.is_dir() else Path("/work/shared/data/nab"))
    p.add_argument("--rounds", type=int, default=30, help="scrape rounds of the footprint run (default 30)")
    args = p.parse_args(argv)
    reduction(args.nab)
    footprint(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
