"""Memory per series of ``inferwatch serve``, and what the 1,000,000-label request costs (issue 31).

    python benchmarks/bench_series_memory.py [--series 200000] [--batch 10000]

Starts ``inferwatch serve`` (SQLite store, default limits) on loopback, pushes
``--series`` new series by remote write (one sample each, ``--batch`` a request,
10 labels a series, one metric name per 50,000 series), and prints the server's
RSS before and after and the bytes a series. Then it sends one remote-write
request holding one series of 1,000,000 labels (about 14 MB before snappy) and
prints the answer, the time to it and the RSS after.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

import _results
from inferwatch.edge import REMOTE_WRITE_HEADERS, encode_write_request
from inferwatch.model import Labels, Sample

TOKEN = "bench-series-memory"
AUTH = {**REMOTE_WRITE_HEADERS, "Authorization": f"Bearer {TOKEN}"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _series(first: int, n: int, now: float) -> list[Sample]:
    return [Sample(Labels({"__name__": f"bench_metric_{(first + i) // 50_000}", "id": str(first + i),
                           **{f"l{k}": f"value-{k}-{(first + i) % 97}" for k in range(8)}}), now, 1.0)
            for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--series", type=int, default=200_000)
    ap.add_argument("--batch", type=int, default=10_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "cfg.yml"
        cfg.write_text(f"server: {{data_dir: '{tmp}/data', api_token: {TOKEN}}}\n")
        port = _port()
        proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg),
                                 "--listen", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        try:
            with httpx.Client(base_url=url, timeout=300) as c:
                for _ in range(600):
                    try:
                        if c.get("/-/ready").status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    time.sleep(0.2)
                rss = psutil.Process(proc.pid)
                now = time.time()
                c.post("/api/v1/write", content=encode_write_request(_series(10**9, 100, now)), headers=AUTH)
                before = rss.memory_info().rss
                t0 = time.perf_counter()
                for first in range(0, args.series, args.batch):
                    body = encode_write_request(_series(first, min(args.batch, args.series - first), now))
                    r = c.post("/api/v1/write", content=body, headers=AUTH)
                    assert r.status_code == 204, r.text[:300]
                took = time.perf_counter() - t0
                after = rss.memory_info().rss
                huge = Labels({"__name__": "huge", **{f"l{i:07d}": "v" for i in range(1_000_000)}})
                body = encode_write_request([Sample(huge, now, 1.0)])
                t1 = time.perf_counter()
                r = c.post("/api/v1/write", content=body, headers=AUTH)
                refused = time.perf_counter() - t1
                final = rss.memory_info().rss
        finally:
            proc.terminate()
            proc.wait(30)
    print(json.dumps({
        "series": args.series, "push_s": round(took, 1), "rss_before_mb": round(before / 1e6),
        "rss_after_mb": round(after / 1e6), "bytes_per_series": round((after - before) / args.series),
        "million_label_request_mb": round(len(body) / 1e6, 1), "million_label_status": r.status_code,
        "million_label_error": r.json().get("error", "")[:120], "million_label_s": round(refused, 2),
        "rss_after_million_label_mb": round(final / 1e6)}))
    _results.record("Hostile input, faults and load", "Memory per stored series (SQLite store, 10 labels)",
                    f"{round((after - before) / args.series):,} bytes", "–", None,
                    note=f"{args.series:,} series")


if __name__ == "__main__":
    main()
