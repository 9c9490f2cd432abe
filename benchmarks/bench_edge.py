"""The edge agent: bytes on the wire against the naive upload, reconstruction error, agent RSS and CPU.

    python benchmarks/bench_edge.py [--nab DIR] [--rounds N] [--breakdown] [--only traces|bytes|footprint]

0. Real device traces (benchmarks/traces/*.om.gz, recorded by benchmarks/record_device_trace.py:
   Debian's prometheus-node-exporter, `inferwatch exporter` and an SDK-instrumented app under a
   varying load, scraped every 15 s by a real Prometheus) replayed by `edge simulate --openmetrics`'s
   code: the real deadband (counters as counters, histograms and summaries as units), the real
   format-3 encoder, one batch per minute of sample time for sent and naive alike. Per type: series,
   points, sent, naive and sent bytes, reduction, the largest gauge error (relative to the held
   value) and the largest counter error over 5-minute windows. Once with the default heartbeat
   (5 min, no back-off) and once with the back-off up to 30 min (heartbeat_max).
1. Delta reporting over NAB's realKnownCause and realAWSCloudwatch files, replayed as device
   metrics: each folder is one device whose series are the folder's files, all batched
   together (one gzip'ed ingest batch per minute of sample time, the agent's encoder); the
   naive upload sends every point with the same batching and compression (both in the agent's
   format, version 2: labels once, then series ids). Default deadband
   (10 %, floor 0.01) with the 5-minute heartbeat. Three replays:
     (a) each NAB point is one collection of a device collecting every 15 s (the headline);
     (b) NAB's 5-minute values as a device collecting every 15 s sees them (each value held
         for its 5 minutes: 20 collections per NAB point);
     (c) the files' own 5-minute timestamps (every point is a heartbeat: no saving possible).
   (b) runs only with --held (20x the points; it is the steady-camera model, not the headline).
   NAB is the adversarial case: one noisy business series per file, nothing like a device.
   Errors: |true - reconstructed| / max(|reconstructed|, floor), reconstructed as the server
   does (the last sent value holds); at most the deadband by construction.
1d. Where the bytes go: the same replays, the series of a device aligned
   to one start (a device's series run at the same time), encoded by a bench-only encoder
   that adds one idea at a time: labels sent once per spool (a series dictionary), a
   device-level heartbeat that carries no value, a compact envelope, bigger batches, and
   values rounded within the band. Naive and deadband always use the same encoder, batching
   and gzip (the rounding applies to deadband values only: it is lossy, within the band).
   The agent sends version 2 of ``inferwatch.formats._wire`` (the dictionary and the compact
   envelope); the value-less heartbeat, the rounding and the 1-hour batches are not built.
2. A real `inferwatch edge` process scraping a local endpoint of 1,000 series once a second
   and uploading to a local receiver: resident memory and CPU seconds per 1,000 samples read,
   printed beside Telegraf's published figures (no Telegraf binary here: see TELEGRAF).
"""

from __future__ import annotations

import argparse
import gzip
import http.server
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import _results
from inferwatch.edge import (
    AgentStats,
    Batch,
    DeadbandSettings,
    SimulationResult,
    encode_batch,
    encode_compact,
    read_openmetrics,
    read_series_csv,
    replay,
    simulate_device,
)
from inferwatch.model import Labels, Sample

ROOT = Path(__file__).resolve().parents[1]
NAB = ROOT.parent / "shared" / "data" / "nab"
TRACES = ROOT / "benchmarks" / "traces"
RECORDED_TRACE = "device-15s-30m.om.gz"  # the trace whose format-2 comparison is RESULTS.md's row
FOLDERS = ("realKnownCause", "realAWSCloudwatch")
STEP = 15.0


def _replay(points: Sequence[tuple[float, float]], mode: str) -> list[tuple[float, float]]:
    t0 = points[0][0]
    if mode == "a":
        return [(t0 + i * STEP, v) for i, (_, v) in enumerate(points)]
    if mode == "b":
        return [(t0 + (20 * i + k) * STEP, v) for i, (_, v) in enumerate(points) for k in range(20)]
    return list(points)


def traces(folder: Path = TRACES) -> None:
    """Section 0: each recorded device, per type and in total, at the default band."""
    files = sorted(folder.glob("*.om.gz"))
    where = folder.relative_to(ROOT) if folder.is_relative_to(ROOT) else folder
    print(f"0. real device traces ({len(files)} in {where}), default deadband (10 %), 1-minute batches, "
          "format 3 for sent and naive alike")
    head = (f"   {'type':<10} {'series':>6} {'points':>7} {'sent':>6} {'naive B':>9} {'sent B':>8} "
            f"{'fewer':>7} {'max rel':>8} {'max 5m rate':>11} {'max 5m q':>8} {'q rank':>6}")
    for f in files:
        samples, kinds = read_openmetrics(f)
        for title, settings in (("heartbeat 5m", DeadbandSettings()),
                                ("heartbeat 5m backing off to 30m", DeadbandSettings(heartbeat_max=1800.0))):
            r = replay(samples, kinds, settings)
            span = (max(s.t for s in samples) - min(s.t for s in samples)) / 60
            print(f"\n   {f.name}: {span:.0f} minutes, {title}")
            print(head)
            for kind, x in r.by_type.items():
                print(f"   {kind:<10} {x['series']:>6} {x['points']:>7} {x['sent']:>6} {x['bytes_naive']:>9} "
                      f"{x['bytes_sent']:>8} {x['reduction']:>7.1%} {x['max_rel_error']:>8.4f} "
                      f"{x['max_rate_rel_error']:>11.4f} {x.get('max_quantile_rel_error', 0.0):>8.4f} "
                      f"{x.get('max_quantile_rank_error', 0.0):>6.4f}")
            total = sum(x["series"] for x in r.by_type.values())
            print(f"   {'ALL':<10} {total:>6} {r.points:>7} {r.sent:>6} {r.bytes_naive:>9} {r.bytes_sent:>8} "
                  f"{r.reduction:>7.1%} {r.max_rel_error:>8.4f} {r.max_rate_rel_error:>11.4f} "
                  f"{r.max_quantile_rel_error:>8.4f} {r.max_quantile_rank_error:>6.4f}   "
                  f"target >= 90 % fewer: {'OK' if r.reduction >= 0.9 else 'MISSED'}")
            if settings.heartbeat_max == settings.heartbeat:
                v2 = _v2_bytes(samples)
                print(f"   the naive upload in format 2 (every point, what the agent sent before format 3, "
                      f"same batching): {v2} B -> {r.bytes_sent} B: {1 - r.bytes_sent / v2:.1%} fewer")
                if f.name == RECORDED_TRACE:
                    fewer = f"{r.bytes_sent:,} B ({1 - r.bytes_sent / v2:.1%} fewer)"
                    _results.record("Edge agent", "The same (5 m heartbeat) against the agent's earlier "
                                    "format 2 naive upload", fewer, f"{v2:,} B", f"{r.bytes_sent / v2:.3f}")


def _v2_bytes(samples: Sequence[Sample], interval: float = 60.0) -> int:
    """Every point in format 2 (``encode_compact``), one batch per minute, labels once."""
    ids: dict[Labels, int] = {}
    total = 0
    batch: list[Sample] = []
    window = None
    for s in [*sorted(samples, key=lambda s: s.t), None]:
        w = math.floor(s.t / interval) if s is not None else None
        if batch and (s is None or w != window or len(batch) >= 1000):
            fresh = {}
            for x in batch:
                if x.labels not in ids:
                    ids[x.labels] = len(ids) + 1
                    fresh[ids[x.labels]] = x.labels
            one = Batch("", f"{_SPOOL}:1-{len(batch)}", tuple(batch), 300.0)
            total += len(encode_compact(one, [ids[x.labels] for x in batch], fresh))
            batch = []
        if s is not None:
            batch.append(s)
            window = w
    return total


def _row(name: str, r: SimulationResult) -> str:
    return (f"   {name:<48} {r.points:>8} {r.sent:>7} {r.bytes_naive:>10} {r.bytes_sent:>9} "
            f"{r.reduction:>8.1%} {r.max_rel_error:>8.4f}")


def reduction(nab: Path, held: bool = False) -> None:
    settings = DeadbandSettings()
    head = (f"   {'series':<48} {'points':>8} {'sent':>7} {'naive B':>10} {'sent B':>9} {'fewer':>8} "
            f"{'max err':>8}")
    for mode, title in (("a", "(a) one NAB point per 15 s collection"),
                        ("b", "(b) NAB values held, collected every 15 s"),
                        ("c", "(c) the files' own 5-minute timestamps")):
        if mode == "b" and not held:
            continue
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
        if mode == "a":
            _results.record("Edge agent", "Upload bytes, NAB replayed one point per 15 s (adversarial)",
                            f"{sent:,} B ({fewer:.1%} fewer)", f"naive: {naive:,} B", f"{sent / naive:.3f}")


# ---- 1d. where the bytes go: a bench-only encoder, one idea at a time ---------------------------

_T0 = 1_700_000_000.0
_SPOOL = "5f3a9c0d12e4"
Row = tuple[float, str, float]  # (t, series, v)


def _aligned(nab: Path, folder: str, step: float) -> dict[str, list[tuple[float, float]]]:
    return {f.stem: [(_T0 + i * step, v) for i, (_, v) in enumerate(read_series_csv(f))]
            for f in sorted((nab / folder).glob("*.csv"))}


def _round_within(v: float, tol: float, floor: float) -> float:
    """``v`` rounded to a power of ten no coarser than ``2 * tol * max(|v|, floor)`` (error <= tol)."""
    if tol <= 0 or not math.isfinite(v):
        return v
    k = math.floor(math.log10(2 * tol * max(abs(v), floor)))
    return round(v, -k) if k < 0 else float(round(v / 10**k) * 10**k)


def _deadband(series: dict[str, list[tuple[float, float]]], settings: DeadbandSettings, *,
              series_heartbeat: bool, tol: float) -> tuple[list[Row], float]:
    """Rows sent and the largest relative reconstruction error (the server holds the last sent)."""
    out: list[Row] = []
    worst = 0.0
    for name, pts in series.items():
        held_t, held = -math.inf, math.nan
        for t, v in pts:
            due = series_heartbeat and t - held_t >= settings.heartbeat
            if due or held != held or abs(v - held) > settings.threshold(held):
                held_t, held = t, _round_within(v, tol, settings.floor)
                out.append((t, name, held))
            worst = max(worst, abs(v - held) / max(abs(held), settings.floor))
    out.sort(key=lambda r: r[0])
    return out, worst


class _Encoder:
    """gzip'ed JSON batches; each flag is one idea (all off = version 1; dictionary + compact = version 2,
    what the agent sends, in the shape of ``encode_compact``)."""

    def __init__(self, *, dictionary: bool, compact: bool, step: float) -> None:
        self.dictionary, self.compact, self.step = dictionary, compact, step
        self.ids: dict[str, int] = {}
        self.seq = 0

    def encode(self, rows: list[Row], beats: list[float]) -> bytes:
        if not self.dictionary and not self.compact:  # exactly the agent's encoder
            samples = tuple(Sample(Labels.of("edge_simulated_value", device="simulated", series=n), t, v)
                            for t, n, v in rows)
            first, self.seq = self.seq + 1, self.seq + len(rows)
            batch = Batch("simulated", f"{_SPOOL}:{first}-{self.seq}", samples, 300.0, AgentStats())
            return encode_batch(batch)
        t0 = min([r[0] for r in rows] + beats)
        unit = self.step if self.compact else 0.001
        cols: dict[str, list[list[float]]] = {}
        defs: dict[str, dict[str, str]] = {}
        last: dict[str, float] = {}
        for t, n, v in rows:
            if n not in self.ids:
                self.ids[n] = len(self.ids) + 1
                defs[str(self.ids[n])] = {"__name__": "edge_simulated_value", "device": "simulated",
                                          "series": n}
            col = cols.setdefault(n, [[], []])
            col[0].append(round((t - last.get(n, t0)) / unit))
            col[1].append(int(v) if float(v).is_integer() and abs(v) < 2**53 else v)
            last[n] = t
        first, self.seq = self.seq + 1, self.seq + len(rows) + len(beats)
        body: dict[str, object]
        if self.compact:  # device from the token; agent stats only when not zero
            body = {"v": 2, "b": f"{_SPOOL}:{first}-{self.seq}", "hb": 300, "t0": round(t0 * 1000),
                    "tu": round(unit * 1000)}
        else:
            body = {"version": 2, "device": "simulated", "batch": f"{_SPOOL}:{first}-{self.seq}",
                    "heartbeat_s": 300.0, "agent": {"backlog": 0, "dropped": {"age": 0, "bytes": 0,
                                                                           "disk_full": 0}},
                    "t0": round(t0 * 1000)}
        if defs:
            body["defs"] = defs
        body["s"] = [[self.ids[n], c[0], c[1]] for n, c in cols.items()]
        if beats:
            body["beats"] = [round((b - t0) / unit) for b in beats]  # not in version 2
        return gzip.compress(json.dumps(body, separators=(",", ":")).encode(), compresslevel=6, mtime=0)


def _wire(rows: list[Row], beats: list[float], window: float, enc: _Encoder) -> int:
    groups: dict[int, tuple[list[Row], list[float]]] = {}
    for r in rows:
        groups.setdefault(math.floor(r[0] / window), ([], []))[0].append(r)
    for b in beats:
        groups.setdefault(math.floor(b / window), ([], []))[1].append(b)
    return sum(len(enc.encode(*groups[k])) for k in sorted(groups))


VARIANTS = (  # (name, dictionary, device heartbeat without value, compact, batch window s, rounding)
    ("version 1 format, 1-min batches", False, False, False, 60.0, 0.0),
    ("+ labels once (series dictionary)", True, False, False, 60.0, 0.0),
    ("+ compact envelope, time unit (= v2)", True, False, True, 60.0, 0.0),
    ("+ device heartbeat, no value", True, True, True, 60.0, 0.0),
    ("+ 5-min batches (= heartbeat)", True, True, True, 300.0, 0.0),
    ("+ values rounded within 5 %", True, True, True, 300.0, 0.05),
    ("+ 1-hour batches (past the budget)", True, True, True, 3600.0, 0.05),
)


def breakdown(nab: Path) -> None:
    settings = DeadbandSettings()
    for mode, step, title in (("a", STEP, "one NAB point per 15 s collection"),
                              ("c", 300.0, "NAB's own 5-minute step")):
        print(f"\n1d. where the bytes go, ({mode}) {title}, each device's series aligned to one start")
        print(f"   {'variant':<40} {'sent':>7} {'naive B':>9} {'sent B':>9} {'fewer':>7} {'max err':>8}")
        devices = {folder: _aligned(nab, folder, step) for folder in FOLDERS}
        points = sum(len(p) for d in devices.values() for p in d.values())
        for name, dictionary, device_hb, compact, window, tol in VARIANTS:
            naive = sent_b = sent_n = 0
            worst = 0.0
            for series in devices.values():
                rows = sorted(((t, n, v) for n, p in series.items() for t, v in p), key=lambda r: r[0])
                naive += _wire(rows, [], window, _Encoder(dictionary=dictionary, compact=compact, step=step))
                sent, err = _deadband(series, settings, series_heartbeat=not device_hb, tol=tol)
                beats = ([rows[0][0] + k * settings.heartbeat
                          for k in range(int((rows[-1][0] - rows[0][0]) // settings.heartbeat) + 1)]
                         if device_hb else [])
                enc = _Encoder(dictionary=dictionary, compact=compact, step=step)
                sent_b += _wire(sent, beats, window, enc)
                sent_n, worst = sent_n + len(sent), max(worst, err)
            print(f"   {name:<40} {sent_n:>7} {naive:>9} {sent_b:>9} {1 - sent_b / naive:>7.1%} "
                  f"{worst:>8.4f}")
            bound = 1 - sent_n / points
        print(f"   ({points} points; the last variant sends {1 - bound:.1%} of them: with values at full "
              f"precision the bytes cannot fall much below that share)")


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


# Telegraf (the peer the issue names): no binary on this machine and no network, so its published
# figures. InfluxData publishes no CPU-per-sample or memory benchmark of Telegraf (searched its docs
# and blog); the one figure found is a user's `top` line in Telegraf's own issue tracker.
TELEGRAF = (
    "Telegraf, published (not run here): RES 26 MiB, 11.6 % of one CPU in a user's `top` "
    "(https://github.com/influxdata/telegraf/issues/1855);\n"
    "   no per-sample CPU figure is published, so no CPU ratio is printed"
)
TELEGRAF_RSS_MIB = 26.0


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
    print(f"   {TELEGRAF}")
    ratio = peak[0] / 2**20 / TELEGRAF_RSS_MIB
    print(f"   peak resident memory against Telegraf's published 26 MiB: {ratio:.2f}x")
    _results.record("Edge agent", "Peak resident memory, 1,000 series scraped once a second",
                    f"{peak[0] / 2**20:.1f} MiB", f"Telegraf, published: {TELEGRAF_RSS_MIB:g} MiB",
                    f"{ratio:.2f}")
    _results.record("Edge agent", "CPU per 1,000 samples read, 1,000 series scraped once a second",
                    f"{1000 * (cpu - start_cpu) / (n * series) * 1000:.1f} ms", "(no published figure)", None,
                    note=f"load {os.getloadavg()[0]:.1f}")


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nab", type=Path, default=NAB if NAB.is_dir() else Path("/work/shared/data/nab"))
    p.add_argument("--rounds", type=int, default=30, help="scrape rounds of the footprint run (default 30)")
    p.add_argument("--held", action="store_true", help="also replay (b): NAB values held, 20x the points")
    p.add_argument("--only", choices=("traces", "bytes", "footprint"), help="run one part only")
    p.add_argument("--breakdown", action="store_true", help="also 1d: where NAB's bytes go (slow)")
    args = p.parse_args(argv)
    if args.only in (None, "traces"):
        traces()
    if args.only in (None, "bytes"):
        reduction(args.nab, held=args.held)
        if args.breakdown:
            breakdown(args.nab)
    if args.only in (None, "footprint"):
        footprint(args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
