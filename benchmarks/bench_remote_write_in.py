"""Remote-write in: the same request stream into ``inferwatch serve`` and into Prometheus 2.42.

    python benchmarks/bench_remote_write_in.py [--batch 2000] [--new 20 | --series N] [--known K]
                                               [--rounds 5] [--prometheus /usr/bin/prometheus]

Requests of ``--batch`` samples (2,000, about what a Prometheus agent sends
per request), pre-encoded before timing (snappy protobuf ``WriteRequest``):
first ``--new`` requests of series never seen (the cold path: index, series
rows; ``--series N`` sets ``--new`` to N / batch), then ``--known`` requests
(default: as many) of the series already stored, one more sample each. Each
request is POSTed in turn, over loopback, to ``inferwatch serve`` (SQLite
store in a temp dir, ``POST /api/v1/write``) and to Prometheus 2.42
(``--web.enable-remote-write-receiver``), one server at a time (the other's
work after answering would fall into the timing), each first sent one untimed
warm-up request of 100 other series; the rate is samples / wall time of the
phase, answers included; the server's CPU time over the phase is read from
``/proc`` beside it. ``--rounds R`` (5) repeats both with fresh servers, the
order alternating (a shared machine's load drifts), and prints and records the
medians with their ranges and the ratio of each round. Target (issues 19 and
56): at least Prometheus's rate. The issue's shape, 10,000 new series per
request up to 100,000:

    python benchmarks/bench_remote_write_in.py --batch 10000 --series 100000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

import _results
from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.model import Labels, Sample

TOKEN = "bench-token"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{url}: the process exited with {proc.returncode}")
        try:
            if httpx.get(url + "/-/ready", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)  # polling an external process's readiness, bounded by the deadline
    raise SystemExit(f"{url} not ready after {timeout}s")


def _requests(batch: int, first: int, count: int, t: float,
              name: str = "bench_requests_total") -> list[bytes]:
    out = []
    for r in range(count):
        base = first + r * batch
        out.append(encode_write_request(
            Sample(Labels.of(name, job="bench", instance=f"host-{i % 500}",
                             route=f"/r{i // 500}", code="200"), t, float(i))
            for i in range(base, base + batch)))
    return out


@contextlib.contextmanager
def _server(name: str, argv: list[str], port: int, headers: dict[str, str],
            tmp: Path) -> Iterator[tuple[httpx.Client, int]]:
    """A started server (ready, warmed up by one untimed request), a client for it and its pid."""
    url = f"http://127.0.0.1:{port}"
    with (tmp / f"{name}.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            _ready(url, proc)
            with httpx.Client(base_url=url, timeout=600, headers={**REMOTE_WRITE_HEADERS, **headers}) as c:
                _post(c, _requests(100, 0, 1, time.time() - 60, "bench_warmup")[0])
                yield c, proc.pid
        finally:
            proc.terminate()
            proc.wait(30)


def _post(c: httpx.Client, body: bytes) -> float:
    t0 = time.perf_counter()
    r = c.post("/api/v1/write", content=body)
    took = time.perf_counter() - t0
    if r.status_code != 204:
        raise SystemExit(f"{c.base_url}: {r.status_code} {r.text[:200]}")
    return took


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used, and its children waited for."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _phases(c: httpx.Client, pid: int, phases: dict[str, list[bytes]], batch: int
            ) -> dict[str, tuple[float, float]]:
    """Per phase: samples/s (samples / the wall time from the first send to the last answer) and the
    server's CPU microseconds a sample."""
    out = {}
    for phase, bodies in phases.items():
        t0, cpu0 = time.perf_counter(), _cpu(pid)
        for body in bodies:
            _post(c, body)
        took, cpu = time.perf_counter() - t0, _cpu(pid) - cpu0
        out[phase] = len(bodies) * batch / took, 1e6 * cpu / (len(bodies) * batch)
    return out


def _spread(xs: list[float], fmt: str = ",.0f") -> str:
    """``median (min–max)`` of ``xs`` (just the figure for one)."""
    mid = format(statistics.median(xs), fmt)
    return mid if len(xs) == 1 else f"{mid} ({min(xs):{fmt}}–{max(xs):{fmt}})"


def _inferwatch(tmp: Path, port: int) -> list[str]:
    cfg = tmp / "inferwatch.yml"
    cfg.write_text(f"server: {{data_dir: '{tmp}/iw-data', api_token: {TOKEN}}}\n")
    return [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg),
            "--listen", f"127.0.0.1:{port}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--new", type=int, default=20, help="requests of new series")
    ap.add_argument("--series", type=int, default=0, help="new series in all (sets --new to SERIES / BATCH)")
    ap.add_argument("--known", type=int, default=0, help="requests of known series (default: as --new)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="runs of both servers, the order alternating; the medians are printed")
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    args = ap.parse_args()
    if args.series:
        args.new = max(1, args.series // args.batch)
    args.known = args.known or args.new
    now = time.time()
    phases = {"new series": _requests(args.batch, 0, args.new, now - 60),
              "known series": [b for k in range(args.known // max(args.new, 1) + 1)
                               for b in _requests(args.batch, 0, args.new, now - 30 + k)][:args.known]}

    def prometheus(tmp: Path, port: int) -> list[str]:
        (tmp / "prometheus.yml").write_text("global: {scrape_interval: 1m}\n")
        return [args.prometheus, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp}/prom",
                f"--web.listen-address=127.0.0.1:{port}", "--web.enable-remote-write-receiver"]

    servers = {"inferwatch": (_inferwatch, {"Authorization": f"Bearer {TOKEN}"})}
    if os.path.exists(args.prometheus):
        servers["prometheus"] = (prometheus, {})
    rates: dict[str, dict[str, list[float]]] = {name: {p: [] for p in phases} for name in servers}
    cpus: dict[str, dict[str, list[float]]] = {name: {p: [] for p in phases} for name in servers}
    loads = [os.getloadavg()[0]]
    for r in range(args.rounds):
        for name in list(servers)[:: 1 if r % 2 == 0 else -1]:  # the order alternates between rounds
            start, headers = servers[name]
            with tempfile.TemporaryDirectory() as d:
                tmp, port = Path(d), _port()
                with _server(name, start(tmp, port), port, headers, tmp) as (client, pid):
                    for phase, (rate, cpu) in _phases(client, pid, phases, args.batch).items():
                        rates[name][phase].append(rate)
                        cpus[name][phase].append(cpu)
        loads.append(os.getloadavg()[0])
    for phase in phases:
        ours = rates["inferwatch"][phase]
        line: dict[str, object] = {"phase": phase, "requests": len(phases[phase]), "batch": args.batch,
                                   "series": args.new * args.batch, "rounds": args.rounds,
                                   "inferwatch_samples_per_s": round(statistics.median(ours)),
                                   "inferwatch_per_round": [round(x) for x in ours],
                                   "inferwatch_cpu_us_per_sample": round(
                                       statistics.median(cpus["inferwatch"][phase]), 2),
                                   "load_average": [round(x, 1) for x in loads]}
        ratios: list[float] = []
        if "prometheus" in rates:
            theirs = rates["prometheus"][phase]
            ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
            line |= {"prometheus_samples_per_s": round(statistics.median(theirs)),
                     "prometheus_per_round": [round(x) for x in theirs],
                     "prometheus_cpu_us_per_sample": round(statistics.median(cpus["prometheus"][phase]), 2),
                     "ratio_inferwatch_over_prometheus": round(statistics.median(ratios), 3),
                     "ratio_per_round": [round(x, 3) for x in ratios]}
        print(json.dumps(line))
        peer = rates.get("prometheus", {}).get(phase)
        cpu = {name: statistics.median(c[phase]) for name, c in cpus.items()}
        _results.record(
            "Ingest", f"Remote write in, {phase} ({len(phases[phase])} × {args.batch:,})",
            f"{_spread(ours)} samples/s",
            f"Prometheus 2.42: {_spread(peer)} samples/s" if peer else None,
            f"{_spread(ratios, '.2f')}{' per round' if len(ratios) > 1 else ''}; "
            f"server CPU {cpu['inferwatch'] / cpu['prometheus']:.2f}" if peer else None,
            note=f"median of {args.rounds} round{'s' if args.rounds > 1 else ''}; "
                 f"{cpu['inferwatch']:.1f} µs CPU a sample; load average {min(loads):.1f}–{max(loads):.1f}")

if __name__ == "__main__":
    main()
