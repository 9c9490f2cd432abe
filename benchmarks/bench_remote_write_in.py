"""Remote-write in: the same request stream into ``inferwatch serve`` and into Prometheus 2.42.

    python benchmarks/bench_remote_write_in.py [--batch 2000] [--new 20 | --series N] [--known K]
                                               [--prometheus /usr/bin/prometheus]

Requests of ``--batch`` samples (2,000, about what a Prometheus agent sends
per request), pre-encoded before timing (snappy protobuf ``WriteRequest``):
first ``--new`` requests of series never seen (the cold path: index, series
rows; ``--series N`` sets ``--new`` to N / batch), then ``--known`` requests
(default: as many) of the series already stored, one more sample each. Each
request is POSTed in turn, over loopback, to ``inferwatch serve`` (SQLite
store in a temp dir, ``POST /api/v1/write``) and to Prometheus 2.42
(``--web.enable-remote-write-receiver``), both running, each first sent one
untimed warm-up request of 100 other series. Each request goes to one server
then the other (which one first alternates), so a change of load on a shared
machine falls on both alike; a server's rate is samples / the sum of its
request times (send to answer). Target (issue 19): at least Prometheus's rate. The issue's
shape, 10,000 new series per request up to 100,000:

    python benchmarks/bench_remote_write_in.py --batch 10000 --series 100000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

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
            tmp: Path) -> Iterator[httpx.Client]:
    """A started server (ready, warmed up by one untimed request) and a client for it."""
    url = f"http://127.0.0.1:{port}"
    with (tmp / f"{name}.log").open("wb") as log:
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            _ready(url, proc)
            with httpx.Client(base_url=url, timeout=600, headers={**REMOTE_WRITE_HEADERS, **headers}) as c:
                _post(c, _requests(100, 0, 1, time.time() - 60, "bench_warmup")[0])
                yield c
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


def _phase(clients: list[httpx.Client], bodies: list[bytes], batch: int) -> list[float]:
    """Samples/s of each server: each request goes to all in turn (the first one alternating), so a
    change of load on a shared machine falls on all alike; each rate is over its own answer times."""
    took = [0.0] * len(clients)
    for i, body in enumerate(bodies):
        order = range(len(clients)) if i % 2 == 0 else reversed(range(len(clients)))
        for k in order:
            took[k] += _post(clients[k], body)
    return [len(bodies) * batch / t for t in took]


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

    with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
        tmp = Path(d)
        clients = [stack.enter_context(_server("inferwatch", _inferwatch(tmp, port := _port()), port,
                                               {"Authorization": f"Bearer {TOKEN}"}, tmp))]
        if os.path.exists(args.prometheus):
            clients.append(stack.enter_context(_server("prometheus", prometheus(tmp, port := _port()), port,
                                                       {}, tmp)))
        rates = {phase: _phase(clients, bodies, args.batch) for phase, bodies in phases.items()}
    for phase, (ours, *theirs) in rates.items():
        line = {"phase": phase, "requests": len(phases[phase]), "batch": args.batch,
                "series": args.new * args.batch, "inferwatch_samples_per_s": round(ours)}
        if theirs:
            line |= {"prometheus_samples_per_s": round(theirs[0]),
                     "ratio_inferwatch_over_prometheus": round(ours / theirs[0], 3)}
        print(json.dumps(line))


if __name__ == "__main__":
    main()
