"""Mixed load: scrape, rules, dashboards and heavy queries at once, inferwatch vs Prometheus 2.42.

    python benchmarks/bench_mixed_load.py [--series 50000] [--interval 5] [--clients 5] [--minutes 3]
                                          [--warmup 1] [--only inferwatch|prometheus] [--together]
                                          [--isolation fork|thread] [--query YAML] [--align]

One generated target (a child process) serves ``--series`` gauges
``load_gauge{shard,key}`` (100 shards) with new random values each scrape (at full
precision: no ties), plus the
SDK's request counter and latency histogram for one service (``bench``).
Both systems, one after the other on the same machine (``--together``: at the same time,
each with its own clients, so a shared machine's load hits both alike), scrape it every
``--interval`` seconds and evaluate every 5 s: the default rule pack, an SLO
(availability of ``bench``: Sloth's recording rules and burn-rate alerts) and
an alerting rule ``ShardHot`` (``avg by (shard) (load_gauge) > 0.8``). In the
middle third of each run the target turns ten shards hot: an alert storm.
Prometheus gets the same rules as ``inferwatch export prometheus`` writes them.

After ``--warmup`` minutes, ``--clients`` threads each loop over the overview
dashboard's own range queries (service ``bench``) and three heavy ad-hoc ones
(``count(load_gauge > 0.5)``, ``avg by (shard) (load_gauge)``,
``topk(5, load_gauge)``), each a ``query_range`` over the last 10 minutes at
15 s steps, for ``--minutes``. Printed for both: per query p50/p99 and the
ratio, rule-round duration (p50/p99/max of the last-duration gauge read every
second) and missed rounds, scrape duration, errors, RSS over time (growth over
the run's second half), and memory per sample: RSS growth over the second half divided by
the samples appended meanwhile (both systems), and the head's own bytes per sample, both measured:
inferwatch's ``inferwatch_storage_head_bytes`` over ``inferwatch_storage_head_samples`` (every byte
of its head: closed chunks, open arrays with their spare room, the per-series objects and map), and
Prometheus's head chunks read from its files when it stops (``prom_head_bytes.py``: the XOR chunks,
open and closed, with the closed ones' framing; its per-series memory not counted, so the ratio
is, if anything, against inferwatch).
A run of 10 minutes or more also prints the RSS growth over its last 5 minutes for both
(``benchmarks/_rss_window.py``: the last sample over the one 5 minutes before, the first and last
minute's medians, the peak); a 15-minute run with both systems records it as a RESULTS.md row
(``--minutes 13 --warmup 1``: each system runs 15 minutes, one after the other).
The per-query ratios come with their range: the ``all`` row pools light and heavy queries, so its
median sits where they meet. When both systems ran, the rounds, heavy queries and panels are
recorded as RESULTS.md rows (``benchmarks/_results.py``, for ``run.py --results``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import cast

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._results import record
from benchmarks._rss_window import RssWindow, last_minutes
from benchmarks.prom_head_bytes import HeadChunks, read_head_chunks
from tests.promql.compliance import free_port, wait_ready

TOKEN = "mixed-load-token-0123456789"
STEP, SPAN = 15.0, 600.0
AREA = "Hostile input, faults and load"  # RESULTS.md's section
HEAVY = {
    "count(load_gauge > 0.5)": "count(load_gauge > 0.5)",
    "avg by (shard)": "avg by (shard) (load_gauge)",
    "topk(5, load_gauge)": "topk(5, load_gauge)",
}
DASHBOARD = {
    "QPS by code": 'sum by (code) (rate(inferwatch_requests_total{service="bench"}[1m]))',
    "P99 latency": 'histogram_quantile(0.99, sum by (le) '
                   '(rate(inferwatch_request_duration_seconds_bucket{service="bench"}[1m])))',
    "5xx ratio": 'sum(rate(inferwatch_requests_total{service="bench",code=~"5.."}[1m])) '
                 '/ sum(rate(inferwatch_requests_total{service="bench"}[1m]))',
}

# The target: ``python -c TARGET N STORMFILE`` prints its port, then serves /metrics.
TARGET = textwrap.dedent('''
    import http.server, os, random, sys, time
    n, storm = int(sys.argv[1]), sys.argv[2]
    heads = [f'load_gauge{{shard="{i % 100}",key="k{i}"}} ' for i in range(n)]
    LE = ("0.05", "0.1", "0.25", "0.5", "1", "2.5", "+Inf")
    SHARE = (0.3, 0.6, 0.9, 0.97, 0.995, 0.999, 1.0)
    rng = random.Random(1)
    t0 = time.time()
    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def do_GET(self):
            hot = os.path.exists(storm)
            r = rng.random
            vals = [r() for _ in range(n)]
            if hot:
                for i in range(0, n, 10):  # shards 0, 10, 20...: every tenth series is in them
                    vals[i] = 0.9 + 0.1 * vals[i]
            body = "".join([h + f"{v!r}\\n" for h, v in zip(heads, vals)])
            reqs = (time.time() - t0) * 100
            body += "".join(f'inferwatch_requests_total{{service="bench",code="{c}"}} {reqs * s:.0f}\\n'
                            for c, s in (("200", 0.995), ("500", 0.004), ("503", 0.001)))
            body += "".join(f'inferwatch_request_duration_seconds_bucket{{service="bench",le="{le}"}} '
                            f'{reqs * s:.0f}\\n' for le, s in zip(LE, SHARE))
            body += f'inferwatch_request_duration_seconds_count{{service="bench"}} {reqs:.0f}\\n'
            body += f'inferwatch_request_duration_seconds_sum{{service="bench"}} {reqs * 0.08:.3f}\\n'
            data = body.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
''')


def _timeout(interval: float) -> str:
    return f"{min(interval, 10) - 1:g}s"


QUERY = [""]  # ``--isolation``: inferwatch's ``server.query`` in the generated config
ALIGN = [False]  # ``--align``: the clients' start and end on a multiple of the step


def _config(tmp: Path, target: str, interval: float) -> Path:
    cfg = tmp / "inferwatch.yml"
    cfg.write_text(textwrap.dedent(f"""\
        server: {{data_dir: '{tmp / "data"}', api_token: {TOKEN}, evaluation_interval: 5s{QUERY[0]}}}
        scrape:
          targets: [{{job: load, url: '{target}', interval: {interval:g}s, timeout: {_timeout(interval)}}}]
        slos:
          - {{service: bench, type: availability, objective: 99.9}}
        rules:
          rules:
            - name: ShardHot
              dimension: infrastructure
              tier: P2
              signal: {{type: expr, expr: 'avg by (shard) (load_gauge)'}}
              comparison: ">"
              threshold: 0.8
              for: 10s
        """))
    return cfg


class Sampler:
    """Polls the system's own metrics every second: RSS, the rule round's duration, rounds done."""

    def __init__(self, pid: int, metrics_url: str, read: Callable[[str], dict[str, float]]) -> None:
        self.proc, self.url, self.read = psutil.Process(pid), metrics_url, read
        self.rss: list[tuple[float, int]] = []
        """The process's RSS plus its children's private memory (query children share the rest with it)."""
        self.kids_peak = 0  # the children's private memory at its highest
        self.server_rss: list[tuple[float, int]] = []
        """The server's own RSS alone, at the same instants."""
        self.kids: list[tuple[float, int]] = []
        """Children alive at each sample."""
        self.durations: list[float] = []
        self.readings: list[dict[str, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.t0 = time.monotonic()

    def _run(self) -> None:
        with httpx.Client(timeout=30) as c:
            while not self._stop.wait(1.0):
                try:
                    children = self.proc.children(recursive=True)
                    kids = sum(_private(p) for p in children)
                    self.kids_peak = max(self.kids_peak, kids)
                    own, t = self.proc.memory_info().rss, time.monotonic() - self.t0
                    self.rss.append((t, own + kids))
                    self.server_rss.append((t, own))
                    self.kids.append((t, len(children)))
                    got = self.read(c.get(self.url).text)
                    got["t"], got["rss"] = self.rss[-1]
                except (httpx.HTTPError, psutil.Error):
                    continue
                self.readings.append(got)
                self.durations.append(got.get("round", 0.0))

    def start(self) -> Sampler:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


def per_minute(total: list[tuple[float, int]], server: list[tuple[float, int]],
               kids: list[tuple[float, int]]) -> list[tuple[int, int, int, int, float]]:
    """Each minute's peaks: ``(minute, total RSS, the server's own RSS, children alive, their mean)``.

    >>> per_minute([(1.0, 10), (61.0, 30)], [(1.0, 8), (61.0, 12)], [(1.0, 1), (61.0, 3)])
    [(0, 10, 8, 1, 1.0), (1, 30, 12, 3, 3.0)]
    """
    out: dict[int, list[tuple[int, int, int]]] = {}
    for (t, a), (_, b), (_, n) in zip(total, server, kids, strict=True):
        out.setdefault(int(t // 60), []).append((a, b, n))
    return [(m, max(r[0] for r in rows), max(r[1] for r in rows), max(r[2] for r in rows),
             sum(r[2] for r in rows) / len(rows)) for m, rows in sorted(out.items())]


def _private(proc: psutil.Process) -> int:
    """A child's own memory (USS): a forked query child shares the rest of its RSS with the server."""
    try:
        return int(proc.memory_full_info().uss)
    except psutil.Error:  # it ended meanwhile
        return 0


def _per_sample(sampler: Sampler, cut: float) -> float:
    """RSS growth per sample appended, from the first reading after ``cut`` to the last."""
    rows = [r for r in sampler.readings if r["t"] >= cut and "appended" in r]
    if len(rows) < 2 or rows[-1]["appended"] <= rows[0]["appended"]:
        return float("nan")
    return (rows[-1]["rss"] - rows[0]["rss"]) / (rows[-1]["appended"] - rows[0]["appended"])


def _metric(text: str, name: str) -> list[float]:
    return [float(v) for v in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", text, re.M)]


def _read_inferwatch(text: str) -> dict[str, float]:
    out = {"round": sum(_metric(text, "inferwatch_rule_group_last_duration_seconds")),
           "round_cpu": sum(_metric(text, "inferwatch_rule_group_last_cpu_seconds")),
           "rounds": sum(_metric(text, "inferwatch_rule_evaluations_total"))}
    missed = _metric(text, "inferwatch_rule_group_iterations_missed_total")
    if missed:
        out["missed"] = sum(missed)
    for key, name in (("appended", "inferwatch_storage_head_samples"),
                      ("head_bytes", "inferwatch_storage_head_bytes"),
                      ("series", "inferwatch_storage_series"),
                      ("forks", "inferwatch_query_forks_total"),
                      ("shared", "inferwatch_query_shared_total"),
                      ("slot_waits", "inferwatch_query_fork_slot_waits_total"),
                      ("fork_s", "inferwatch_query_fork_seconds_total")):
        got = _metric(text, name)
        if got:
            out[key] = sum(got)
    return out


def _read_prometheus(text: str) -> dict[str, float]:
    rounds = _metric(text, "prometheus_rule_group_iterations_total")
    return {"round": sum(_metric(text, "prometheus_rule_group_last_duration_seconds")),
            "rounds": max(rounds) if rounds else 0.0,
            "missed": sum(_metric(text, "prometheus_rule_group_iterations_missed_total")),
            "appended": sum(_metric(text, "prometheus_tsdb_head_samples_appended_total"))}


def _clients(base: str, n: int, seconds: float,
             queries: dict[str, str]) -> tuple[dict[str, list[float]], int]:
    lat: dict[str, list[float]] = {k: [] for k in queries}
    errors = [0]
    stop = time.monotonic() + seconds

    def client(k: int) -> None:
        names = list(queries)
        i = k  # each client starts at a different query
        with httpx.Client(base_url=base, timeout=300) as c:
            while time.monotonic() < stop:
                name = names[i % len(names)]
                i += 1
                end = time.time()
                if ALIGN[0]:  # as Grafana and inferwatch's dashboard: start and end a multiple of the step
                    end = end // STEP * STEP
                form = {"query": queries[name], "start": f"{end - SPAN:.3f}", "end": f"{end:.3f}",
                        "step": f"{STEP:g}"}
                t = time.monotonic()
                try:
                    r = c.post("/api/v1/query_range", data=form)
                    ok = r.status_code == 200
                except httpx.HTTPError:
                    ok = False
                lat[name].append(time.monotonic() - t)
                errors[0] += not ok

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(seconds + 400)
    return lat, errors[0]


def _pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def _scrape_durations(base: str) -> list[float]:
    q = 'scrape_duration_seconds{job="load"}[30m]'
    r = httpx.get(f"{base}/api/v1/query", params={"query": q}, timeout=120).json()
    res = r.get("data", {}).get("result", [])
    return [float(v) for _, v in res[0]["values"]] if res else []


Reader = Callable[[str], dict[str, float]]
Starter = Callable[[Path, str, float], tuple[subprocess.Popen[bytes], str, str]]


def run_system(name: str, start: Callable[[], tuple[subprocess.Popen[bytes], str, str]],
               read: Reader, args: argparse.Namespace,
               storm: Path) -> dict[str, object]:
    proc, base, metrics = start()
    try:
        sampler = Sampler(proc.pid, metrics, read).start()
        print(f"[{name}] warming up {args.warmup:g} min", file=sys.stderr, flush=True)
        time.sleep(args.warmup * 60)
        run_s = args.minutes * 60
        storm_timer = threading.Timer(run_s / 3, storm.touch)
        calm_timer = threading.Timer(2 * run_s / 3, lambda: storm.unlink(missing_ok=True))
        storm_timer.start()
        calm_timer.start()
        first = sampler.readings[-1] if sampler.readings else {}
        n_dur, n_read = len(sampler.durations), len(sampler.readings)
        load0 = os.getloadavg()[0]
        t_run = time.monotonic()
        lat, errors = _clients(base, args.clients, run_s, {**DASHBOARD, **HEAVY})
        elapsed = time.monotonic() - t_run
        storm_timer.cancel()
        calm_timer.cancel()
        storm.unlink(missing_ok=True)
        last = sampler.readings[-1] if sampler.readings else {}
        sampler.stop()
        scrapes = _scrape_durations(base)
        rounds = last.get("rounds", 0) - first.get("rounds", 0)
        expected = elapsed / 5.0
        counted = "missed" in last
        missed = last["missed"] - first.get("missed", 0.0) if counted else max(0.0, expected - rounds)
        durs = sampler.durations[n_dur:]
        cpus = [r["round_cpu"] for r in sampler.readings[n_read:] if "round_cpu" in r]
        cut = sampler.rss[-1][0] - elapsed / 2 if sampler.rss else 0.0
        half = [r for t, r in sampler.rss if t >= cut]
        return {"load": (load0, os.getloadavg()[0]),
                "lat": lat, "errors": errors, "rounds": rounds, "expected": expected, "missed": missed,
                "missed_counted": counted, "round_p50": _pct(durs, 0.5), "round_p99": _pct(durs, 0.99),
                "round_max": max(durs, default=float("nan")),
                "round_cpu": (_pct(cpus, 0.5), _pct(cpus, 0.99)), "scrape": scrapes, "rss": sampler.rss,
                "rss_half": (half[0], half[-1]) if half else (0, 0), "per_sample": _per_sample(sampler, cut),
                "last5": last_minutes(sampler.rss, 5.0), "kids_peak": sampler.kids_peak,
                "server_last5": last_minutes(sampler.server_rss, 5.0),
                "minutes": per_minute(sampler.rss, sampler.server_rss, sampler.kids),
                "forks": (last.get("forks", 0.0) - first.get("forks", 0.0), last.get("fork_s", 0.0)
                          - first.get("fork_s", 0.0)),
                "shared": (last.get("shared", 0.0) - first.get("shared", 0.0),
                           last.get("slot_waits", 0.0) - first.get("slot_waits", 0.0)),
                "head": last["head_bytes"] / last["appended"] if last.get("appended") and "head_bytes" in last
                else None,
                "head_own": (last["head_bytes"] - last["series"] * series_objects(
                    last["appended"] / last["series"])) / last["appended"]
                if last.get("appended") and "head_bytes" in last and "series" in last else None}
    finally:
        storm.unlink(missing_ok=True)
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()


def series_objects(samples: float = 1e9) -> int:
    """Bytes of one series' objects in inferwatch's head, whatever its samples: the buffer, the headers
    of its two open arrays, a slot of the map, and once it holds ``samples`` >= a chunk's, those of its
    chunks' ``bytes`` and their two index arrays (Prometheus's per-series memory, ``memSeries`` and the
    like, is not in its chunk bytes either)."""
    from array import array

    from inferwatch.store._head import CHUNK, SampleBuffer
    size = sys.getsizeof(SampleBuffer()) + 2 * sys.getsizeof(array("d")) + 8 * 3  # a dict slot: 3 words
    chunks = sys.getsizeof(array("d")) + sys.getsizeof(array("I")) + sys.getsizeof(b"")
    return size + (chunks if samples >= CHUNK else 0)


def start_inferwatch(tmp: Path, target: str, interval: float) -> tuple[subprocess.Popen[bytes], str, str]:
    cfg = _config(tmp, target, interval)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg),
                             "--listen", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                            stderr=open(tmp / "inferwatch.log", "w"), env=env)  # noqa: SIM115
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/-/ready", proc, timeout=300)  # type: ignore[arg-type]
    return proc, base, f"{base}/metrics"


def start_prometheus(tmp: Path, target: str, interval: float) -> tuple[subprocess.Popen[bytes], str, str]:
    cfg = _config(tmp, target, interval)
    out = tmp / "export"
    subprocess.run([sys.executable, "-m", "inferwatch", "export", "prometheus", "--config", str(cfg),
                    "-o", str(out)], check=True, capture_output=True, timeout=300)
    host_port = target.split("/")[2]
    (out / "bench.yml").write_text(textwrap.dedent(f"""\
        global:
          {{scrape_interval: {interval:g}s, evaluation_interval: 5s, scrape_timeout: {_timeout(interval)}}}
        rule_files: ['rules/*.yml']
        scrape_configs:
          - job_name: load
            static_configs: [{{targets: ['{host_port}']}}]
        """))
    port = free_port()
    proc = subprocess.Popen(["prometheus", f"--config.file={out / 'bench.yml'}",
                             f"--storage.tsdb.path={tmp / 'prom'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--enable-feature=memory-snapshot-on-shutdown"],  # writes its open chunks
                            stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"))  # noqa: SIM115
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/-/ready", proc, timeout=300)  # type: ignore[arg-type]
    return proc, base, f"{base}/metrics"


def report(results: dict[str, dict[str, object]], args: argparse.Namespace) -> None:
    print(f"\n{args.series:,} series every {args.interval:g} s, {args.clients} clients, "
          f"{args.minutes:g} min after {args.warmup:g} min warm-up; query_range over {SPAN / 60:g} min "
          f"at {STEP:g} s steps")
    names = list(results)
    print("\n| query | " + " | ".join(f"{n} p50 / p99 (runs)" for n in names)
          + (" | ratio p50 / p99 |" if len(names) == 2 else " |"))
    print("|---" * (len(names) + 1 + (len(names) == 2)) + "|")
    all_lat: dict[str, list[float]] = {n: [] for n in names}
    for q in {**DASHBOARD, **HEAVY}:
        cells, p = [], []
        for n in names:
            xs = results[n]["lat"][q]  # type: ignore[index]
            all_lat[n] += xs
            p.append((_pct(xs, 0.5), _pct(xs, 0.99)))
            cells.append(f"{p[-1][0]:.3f} s / {p[-1][1]:.3f} s ({len(xs)})")
        ratio = f" | {p[0][0] / p[1][0]:.2f} / {p[0][1] / p[1][1]:.2f}" if len(p) == 2 else ""
        print(f"| {q} | " + " | ".join(cells) + ratio + " |")
    p = [(_pct(all_lat[n], 0.5), _pct(all_lat[n], 0.99)) for n in names]
    ratio = f" | {p[0][0] / p[1][0]:.2f} / {p[0][1] / p[1][1]:.2f}" if len(p) == 2 else ""
    print("| all | " + " | ".join(f"{a:.3f} s / {b:.3f} s ({len(all_lat[n])})"
                                 for n, (a, b) in zip(names, p, strict=True)) + ratio + " |")
    if len(names) == 2:
        ratios = per_query_ratios(results, names)
        lo50, hi50 = min(r[0] for r in ratios), max(r[0] for r in ratios)
        lo99, hi99 = min(r[1] for r in ratios), max(r[1] for r in ratios)
        print(f"\nper query, {names[0]} / {names[1]}: p50 {lo50:.2f}-{hi50:.2f}, p99 {lo99:.2f}-{hi99:.2f} "
              "(the 'all' row pools light and heavy queries: its median sits where they meet and moves with "
              "how many of each each system finished; read the per-query rows first)")
    print()
    for n in names:
        r = results[n]
        sc = r["scrape"]
        assert isinstance(sc, list)
        rss = r["rss"]
        assert isinstance(rss, list)
        a, b = r["rss_half"]  # type: ignore[misc]
        growth = (b - a) / a * 100 if a else float("nan")
        head = r["head"]
        note = "" if r["missed_counted"] else " (not counted by the server: rounds due minus done)"
        print(f"{n}: rule round p50 {r['round_p50']:.3f} s, p99 {r['round_p99']:.3f} s, "
              f"max {r['round_max']:.3f} s"
              + (f" (CPU p50 {r['round_cpu'][0]:.3f} s, p99 {r['round_cpu'][1]:.3f} s)"  # type: ignore[index]
                 if r["round_cpu"][0] == r["round_cpu"][0] else "")  # type: ignore[index]
              + f"; rounds {r['rounds']:.0f} of {r['expected']:.0f} due, "
              f"missed {r['missed']:.0f}{note}; "
              f"query errors {r['errors']}; load average {r['load'][0]:.1f} -> {r['load'][1]:.1f}")  # type: ignore[index]
        print(f"{n}: scrape duration p50 {_pct(sc, 0.5):.3f} s, max {max(sc, default=float('nan')):.3f} s "
              f"({len(sc)} scrapes); RSS {rss[0][1] / 2**20:.0f} -> {rss[-1][1] / 2**20:.0f} MiB, "
              f"second half {a / 2**20:.0f} -> {b / 2**20:.0f} MiB ({growth:+.1f} %)"
              + f"; RSS growth per sample appended (second half) {r['per_sample']:.1f} B"
              + (f"; head {head:.2f} B a sample" if head else "")
              + (f"; query children's own memory at its peak {cast(int, r['kids_peak']) / 2**20:.0f} MiB "
                 "(counted in the RSS figures)" if r.get("kids_peak") else ""))
        forks, fork_s = cast(tuple[float, float], r.get("forks", (0.0, 0.0)))
        if forks:
            shared, waits = cast(tuple[float, float], r.get("shared", (0.0, 0.0)))
            print(f"{n}: {forks:.0f} queries evaluated in a forked child, "
                  f"{fork_s / forks * 1000:.1f} ms a fork; {shared:.0f} answered by an identical query's "
                  f"child (single-flight); {waits:.0f} waited for a child's slot")
        hc = cast(HeadChunks | None, r.get("head_chunks"))
        if hc is not None:
            print(f"{n}: head chunks {hc.samples:,} samples in {hc.chunks:,} chunks "
                  f"({hc.open_chunks:,} open), "
                  f"{hc.data_bytes:,} B of XOR data + {hc.framing_bytes:,} B of closed chunks' framing "
                  "(read from chunks_head/ and the shutdown snapshot; per-series memory not counted)")
        last5 = cast(RssWindow | None, r["last5"])
        if last5 is not None and rss[-1][0] - rss[0][0] >= 600:  # the bound: <= 10 % over 5 min
            print(f"{n}: RSS growth over the last 5 minutes (of {(rss[-1][0] - rss[0][0]) / 60:.1f}; "
                  f"the issue's bound <= 10 %): {last5.text()}")
        own5 = cast(RssWindow | None, r.get("server_last5"))
        if own5 is not None and rss[-1][0] - rss[0][0] >= 600:
            print(f"{n}: the server's own RSS alone over the same 5 minutes (children not counted): "
                  f"{own5.text()}")
        minutes = cast(list[tuple[int, int, int, int, float]], r.get("minutes", []))
        if minutes and r.get("kids_peak"):
            print(f"{n}: per minute, peak total / the server alone MiB, children alive at most (mean): "
                  + ", ".join(f"{m}: {tot / 2**20:.0f} / {mine / 2**20:.0f}, {k} ({mk:.1f})"
                              for m, tot, mine, k, mk in minutes))
        marks = rss[:: max(1, len(rss) // 8)]
        print(f"{n}: RSS over time: " + ", ".join(f"{t:.0f}s {v / 2**20:.0f}" for t, v in marks))
    heads = [cast(float | None, results[n]["head"]) for n in names]
    own = cast(float | None, results.get("inferwatch", {}).get("head_own"))
    if own:
        print(f"inferwatch: the samples' own bytes in the head {own:.2f} B a sample (every byte less "
              f"the per-series objects, {series_objects()} B a series once it has a chunk)")
    if len(names) == 2 and heads[0] and heads[1]:
        print(f"head bytes a sample, {names[0]} / {names[1]}: {heads[0]:.2f} / {heads[1]:.2f} = "
              f"{heads[0] / heads[1]:.2f}x (inferwatch's every byte; Prometheus's chunks alone)"
              + (f"; like with like (the samples' own bytes, no per-series memory on either side): "
                 f"{own:.2f} / {heads[1]:.2f} = {own / heads[1]:.2f}x" if own else ""))


def per_query_ratios(results: dict[str, dict[str, object]], names: list[str]) -> list[tuple[float, float]]:
    """Each query's p50 and p99 ratio, the first system over the second."""
    out = []
    for q in {**DASHBOARD, **HEAVY}:
        a, b = (_p50_p99(results[n], q) for n in names)
        out.append((a[0] / b[0], a[1] / b[1]))
    return out


def _p50_p99(r: dict[str, object], q: str) -> tuple[float, float]:
    """Query ``q``'s p50 and p99 in run ``r`` (``all``: every query pooled)."""
    lat = cast(dict[str, list[float]], r["lat"])
    xs = [x for ys in lat.values() for x in ys] if q == "all" else lat[q]
    return _pct(xs, 0.5), _pct(xs, 0.99)


def record_rows(results: dict[str, dict[str, object]], args: argparse.Namespace) -> None:
    """RESULTS.md's rows for this workload (``run.py --results``): rounds, the heavy queries, the panels
    (the default workload's rows by their names there; another workload's rows added under its own)."""
    ours, peer = results.get("inferwatch"), results.get("prometheus")
    if ours is None or peer is None:  # a row is both systems' figures, side by side from one run
        return
    head = (f"Mixed load, {args.series:,} series at {args.interval:g} s, default pack + SLO + an alerting "
            f"rule at 5 s, {args.clients} dashboard clients")
    same = "The same" if (args.series, args.interval, args.clients) == (50_000, 5.0, 5) else head
    load = "load average {:.1f}-{:.1f}".format(*cast(tuple[float, float], ours["load"]))

    def num(r: dict[str, object], key: str) -> float:
        return float(cast(float, r[key]))

    def rounds(r: dict[str, object]) -> str:
        return (f"{num(r, 'round_p50'):.2f} s / {num(r, 'round_p99'):.2f} s, "
                f"{num(r, 'missed'):.0f} of {num(r, 'expected'):.0f} missed")

    def lat(r: dict[str, object], qs: list[str]) -> str:
        return "; ".join("{:.3f} s / {:.3f} s".format(*_p50_p99(r, q)) for q in qs)

    def ratio(qs: list[str]) -> str:
        pairs = [(_p50_p99(ours, q), _p50_p99(peer, q)) for q in qs]
        return "; ".join(f"{a[0] / b[0]:.2f} / {a[1] / b[1]:.2f}" for a, b in pairs)

    cpu = cast(tuple[float, float], ours["round_cpu"])[0]
    record(AREA, f"{head}: rule round p50 / p99, rounds missed", rounds(ours),
           f"Prometheus 2.42: {rounds(peer)}",
           f"{num(ours, 'round_p50') / num(peer, 'round_p50'):.2f} / "
           f"{num(ours, 'round_p99') / num(peer, 'round_p99'):.2f}",
           note=f"the round's own CPU p50 {cpu:.2f} s; {load}")
    count = "`count(load_gauge > 0.5)` (10 min at 15 s); all queries together"
    rows = ((f"{same}: query_range p50 / p99, {count}", ["count(load_gauge > 0.5)", "all"]),
            (f"{same}: `avg by (shard)`; `topk(5, …)`", ["avg by (shard)", "topk(5, load_gauge)"]),
            (f"{same}: the dashboard's own queries (QPS, P99, 5xx ratio), p50 / p99", list(DASHBOARD)))
    for what, qs in rows:
        record(AREA, what, lat(ours, qs), f"Prometheus 2.42: {lat(peer, qs)}", ratio(qs), note=load)
    ours5, peer5 = (cast(RssWindow | None, r["last5"]) for r in (ours, peer))
    if args.warmup + args.minutes >= 14 and ours5 is not None and peer5 is not None:  # a 15-minute run
        held = [cast(float | None, r["head"]) for r in (ours, peer)]
        per = [f"; head {h:.2f} B a sample" if h else "" for h in held]
        what = (f"{same}: RSS over the last 5 minutes of a 15-minute run (the issue's bound: ≤ 10 % growth); "
                "head memory per sample")
        own5 = cast(RssWindow | None, ours.get("server_last5"))
        alone = f"; the server alone (children not counted) {own5.text()}" if own5 is not None else ""
        record(AREA, what, ours5.text() + alone + per[0], f"Prometheus 2.42: {peer5.text()}{per[1]}",
               f"{ours5.growth * 100:+.1f} % / {peer5.growth * 100:+.1f} %", note=load)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=50_000)
    ap.add_argument("--interval", type=float, default=5.0, help="scrape interval, seconds")
    ap.add_argument("--clients", type=int, default=5)
    ap.add_argument("--minutes", type=float, default=3.0, help="minutes of queries (after the warm-up)")
    ap.add_argument("--warmup", type=float, default=1.0, help="minutes of scraping before the queries")
    ap.add_argument("--only", choices=["inferwatch", "prometheus"])
    ap.add_argument("--together", action="store_true",
                    help="run both systems at the same time (side by side) rather than one after the other")
    ap.add_argument("--isolation", choices=["fork", "thread"],
                    help="inferwatch's server.query.isolation (unset: its default, fork on Linux)")
    ap.add_argument("--align", action="store_true",
                    help="the clients align start and end to the step, as Grafana and inferwatch's dashboard "
                    "do (identical queries in flight then share one evaluation in inferwatch); unset: "
                    "end = now, as the issue's figures were measured")
    ap.add_argument("--query", default="", metavar="YAML",
                    help="more of inferwatch's server.query settings, e.g. 'fork_scheduler: batch, "
                    "fork_nice: 19'")
    args = ap.parse_args()
    ALIGN[0] = args.align
    isolation = f"isolation: {args.isolation}" if args.isolation else ""
    settings = ", ".join(x for x in (isolation, args.query) if x)
    if settings:
        QUERY[0] = f", query: {{{settings}}}"
    if args.only != "inferwatch" and shutil.which("prometheus") is None:
        sys.exit("prometheus not on PATH (Debian: apt-get install prometheus), or pass --only inferwatch")
    with tempfile.TemporaryDirectory(prefix="mixed_load_") as d:
        tmp = Path(d)
        storm = tmp / "storm"
        target = subprocess.Popen([sys.executable, "-c", TARGET, str(args.series), str(storm)],
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert target.stdout is not None
            url = f"http://127.0.0.1:{int(target.stdout.readline())}/metrics"
            results: dict[str, dict[str, object]] = {}
            systems = {"inferwatch": (start_inferwatch, _read_inferwatch),
                       "prometheus": (start_prometheus, _read_prometheus)}
            runs = []
            for name, (start, read) in systems.items():
                if args.only in (None, name):
                    (tmp / name).mkdir()

                    def one(name: str = name, start: Starter = start, read: Reader = read) -> None:
                        results[name] = run_system(
                            name, lambda: start(tmp / name, url, args.interval), read, args, storm)
                        if name == "prometheus":  # stopped now: its head chunks are in its files
                            chunks = read_head_chunks(tmp / name / "prom")
                            results[name]["head"] = chunks.per_sample() if chunks.samples else None
                            results[name]["head_chunks"] = chunks
                    runs.append(threading.Thread(target=one, name=name))
            for th in runs:
                th.start()
                if not args.together:
                    th.join()
            for th in runs:
                th.join()
            load = os.getloadavg()
            print(f"\nload average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
                  + (" (both systems ran at the same time)" if args.together else ""))
            report({n: results[n] for n in systems if n in results}, args)
            record_rows(results, args)
        finally:
            target.terminate()
            target.wait(30)


if __name__ == "__main__":
    main()
