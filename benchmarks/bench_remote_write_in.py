"""Remote-write in: the same request stream into ``inferwatch serve`` and into Prometheus 2.42.

    python benchmarks/bench_remote_write_in.py [--batch 2000] [--new 20] [--known 20]
                                               [--prometheus /usr/bin/prometheus]

Requests of ``--batch`` samples (2,000, about what a Prometheus agent sends
per request), pre-encoded before timing (snappy protobuf ``WriteRequest``):
first ``--new`` requests of series never seen (the cold path: index, series
rows), then ``--known`` requests of series already stored (one more sample
each). Each request is POSTed in turn, over loopback, to ``inferwatch serve``
(SQLite store in a temp dir, ``POST /api/v1/write``) and to Prometheus 2.42
(``--web.enable-remote-write-receiver``); the rate is samples / wall time of
the phase, answers included. Target (issue 19): at least Prometheus's rate.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
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


def _requests(batch: int, first: int, count: int, t: float) -> list[bytes]:
    out = []
    for r in range(count):
        base = first + r * batch
        out.append(encode_write_request(
            Sample(Labels.of("bench_requests_total", job="bench", instance=f"host-{i % 500}",
                             route=f"/r{i // 500}", code="200"), t, float(i))
            for i in range(base, base + batch)))
    return out


def _phase(url: str, bodies: list[bytes], batch: int, headers: dict[str, str]) -> float:
    with httpx.Client(base_url=url, timeout=600, headers={**REMOTE_WRITE_HEADERS, **headers}) as c:
        t0 = time.perf_counter()
        for body in bodies:
            r = c.post("/api/v1/write", content=body)
            if r.status_code != 204:
                raise SystemExit(f"{url}: {r.status_code} {r.text[:200]}")
        return len(bodies) * batch / (time.perf_counter() - t0)


def _run(name: str, start: Callable[[Path, int], list[str]], headers: dict[str, str],
         phases: dict[str, list[bytes]], batch: int, tmp: Path) -> dict[str, float]:
    port = _port()
    log = (tmp / f"{name}.log").open("wb")
    proc = subprocess.Popen(start(tmp, port), stdout=log, stderr=subprocess.STDOUT)
    try:
        _ready(f"http://127.0.0.1:{port}", proc)
        return {phase: _phase(f"http://127.0.0.1:{port}", bodies, batch, headers)
                for phase, bodies in phases.items()}
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()


def _inferwatch(tmp: Path, port: int) -> list[str]:
    cfg = tmp / "inferwatch.yml"
    cfg.write_text(f"server: {{data_dir: '{tmp}/iw-data', api_token: {TOKEN}}}\n")
    return [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg),
            "--listen", f"127.0.0.1:{port}"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=2000)
    ap.add_argument("--new", type=int, default=20)
    ap.add_argument("--known", type=int, default=20)
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    args = ap.parse_args()
    now = time.time()
    phases = {"new series": _requests(args.batch, 0, args.new, now - 60),
              "known series": [b for k in range(args.known // max(args.new, 1) + 1)
                               for b in _requests(args.batch, 0, args.new, now - 30 + k)][:args.known]}

    def prometheus(tmp: Path, port: int) -> list[str]:
        (tmp / "prometheus.yml").write_text("global: {scrape_interval: 1m}\n")
        return [args.prometheus, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp}/prom",
                f"--web.listen-address=127.0.0.1:{port}", "--web.enable-remote-write-receiver"]

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ours = _run("inferwatch", _inferwatch, {"Authorization": f"Bearer {TOKEN}"}, phases, args.batch, tmp)
        theirs = _run("prometheus", prometheus, {}, phases, args.batch, tmp) if os.path.exists(
            args.prometheus) else {}
    for phase in phases:
        line = {"phase": phase, "requests": len(phases[phase]), "batch": args.batch,
                "inferwatch_samples_per_s": round(ours[phase])}
        if theirs:
            line |= {"prometheus_samples_per_s": round(theirs[phase]),
                     "ratio_inferwatch_over_prometheus": round(ours[phase] / theirs[phase], 3)}
        print(json.dumps(line))


if __name__ == "__main__":
    main()
