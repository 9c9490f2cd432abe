"""Rule evaluation: one evaluation of the default pack over 10,000 series, inferwatch vs Prometheus 2.42.

    python benchmarks/bench_rules.py [--services 1000] [--prometheus /usr/bin/prometheus]

Side by side in one run, on the same 10,000 series (1,000 services x 10 SDK
series: requests_total for codes 200/500/503, six latency buckets, one
feature PSI gauge; every series also carries job/instance as a scrape adds):

1. inferwatch: 5 minutes of samples every 5 s written to the SQLite store
   (write time reported), then ``Evaluator.evaluate(now)`` of the default
   pack timed over several rounds (each a fresh round: nothing cached from
   the previous one); the median is reported.
2. Prometheus 2.42: a loopback scrape target (a child process) serves the
   same series with values moving in time; Prometheus (temp dir, random free
   port, scrape and evaluation every 5 s) loads the rule file that
   ``to_prometheus_rule_groups`` writes for the same pack; once rate windows
   are full, ``prometheus_rule_group_last_duration_seconds`` (summed over the
   pack's groups) is read over several evaluation cycles; the median is reported.

The whole run is bounded (about two minutes; Prometheus is killed at the end).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path

import numpy as np

import _results
from inferwatch.model import Labels, SystemClock
from inferwatch.rules import Evaluator, default_rule_pack, to_prometheus_rule_yaml
from inferwatch.store import SQLiteStore

LE = ("0.1", "0.25", "0.5", "1", "2.5", "+Inf")
STEP = 5.0
INSTANCE = "127.0.0.1:9999"

# The series, as (name, labels) pairs, and their value at time t as rate * t
# (counters) or a constant (gauges); shared by the store writer and the target.
TARGET = textwrap.dedent('''
    import http.server, socket, sys, time
    n = int(sys.argv[1])
    LE = ("0.1", "0.25", "0.5", "1", "2.5", "+Inf")
    SHARE = (0.5, 0.7, 0.9, 0.97, 0.995, 1.0)
    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            t = time.time() - 1.7e9
            out = []
            for i in range(n):
                s = f"svc{i:04d}"
                err = 0.5 if i % 20 == 0 else 0.001
                slow = 0.2 if i % 25 == 0 else 0.0
                out.append(f'inferwatch_requests_total{{service="{s}",code="200"}} {10 * t}')
                out.append(f'inferwatch_requests_total{{service="{s}",code="500"}} {err * t}')
                out.append(f'inferwatch_requests_total{{service="{s}",code="503"}} {err / 2 * t}')
                for le, share in zip(LE, SHARE):
                    sh = share if le == "+Inf" else max(share - slow, 0.0)
                    out.append(f'inferwatch_request_duration_seconds_bucket{{service="{s}",le="{le}"}} '
                               f'{10 * sh * t}')
                out.append(f'inferwatch_feature_psi{{service="{s}",feature="f1"}} {0.05 * (i % 7)}')
            body = ("\\n".join(out) + "\\n").encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        def log_message(self, *a):
            pass
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()
''')
SHARE = (0.5, 0.7, 0.9, 0.97, 0.995, 1.0)


def series_for(n: int) -> list[tuple[Labels, float, bool]]:
    """(labels, rate-or-value, is_counter) for the n services' 10 series each."""
    out: list[tuple[Labels, float, bool]] = []
    base = {"job": "bench", "instance": INSTANCE}
    for i in range(n):
        s = f"svc{i:04d}"
        err = 0.5 if i % 20 == 0 else 0.001
        slow = 0.2 if i % 25 == 0 else 0.0
        for code, r in (("200", 10.0), ("500", err), ("503", err / 2)):
            out.append((Labels.of("inferwatch_requests_total", service=s, code=code, **base), r, True))
        for le, share in zip(LE, SHARE, strict=True):
            sh = share if le == "+Inf" else max(share - slow, 0.0)
            out.append((Labels.of("inferwatch_request_duration_seconds_bucket", service=s, le=le, **base),
                        10 * sh, True))
        psi = Labels.of("inferwatch_feature_psi", service=s, feature="f1", **base)
        out.append((psi, 0.05 * (i % 7), False))
    return out


def bench_inferwatch(n: int, tmp: Path, rounds: int) -> dict[str, float]:
    """Write 5 minutes of samples to SQLite, then time evaluations of the default pack."""
    series = series_for(n)
    now = time.time()
    times = np.arange(now - 300.0, now + 1e-9, STEP)
    store = SQLiteStore(tmp / "tsdb.sqlite", clock=SystemClock())
    t0 = time.perf_counter()
    for t in times:
        labels = [s[0] for s in series]
        values = [r * (t - 1.7e9) if counter else r for _, r, counter in series]
        store.append_columns(labels, np.full(len(series), t), np.asarray(values))
    write_s = time.perf_counter() - t0
    ev = Evaluator(default_rule_pack(), store, clock=SystemClock())
    durations, fired = [], 0
    for _ in range(rounds):
        t1 = time.perf_counter()
        alerts = ev.evaluate(now)
        durations.append(time.perf_counter() - t1)
        fired = len(ev.active()) or len(alerts)
    store.close()
    return {"series": float(len(series)), "samples": float(len(series) * len(times)), "write_s": write_s,
            "eval_s": statistics.median(durations), "active": float(fired)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


_DUR = re.compile(r'^prometheus_rule_group_last_duration_seconds\{rule_group="[^"]*"\} (\S+)$', re.M)


def bench_prometheus(binary: str, n: int, tmp: Path, readings: int, deadline: float) -> dict[str, float]:
    """Run Prometheus on a loopback target; read its rule-group durations."""
    target = subprocess.Popen([sys.executable, "-c", TARGET, str(n)], stdout=subprocess.PIPE, text=True)
    prom = None
    try:
        assert target.stdout is not None
        tport = int(target.stdout.readline())
        pport = _free_port()
        (tmp / "rules.yaml").write_text(to_prometheus_rule_yaml(default_rule_pack()))
        (tmp / "prometheus.yml").write_text(textwrap.dedent(f"""
            global: {{scrape_interval: 5s, evaluation_interval: 5s, scrape_timeout: 4s}}
            rule_files: [rules.yaml]
            scrape_configs:
              - job_name: bench
                static_configs: [{{targets: ["127.0.0.1:{tport}"]}}]
        """))
        prom = subprocess.Popen(
            [binary, f"--config.file={tmp / 'prometheus.yml'}", f"--storage.tsdb.path={tmp / 'data'}",
             f"--web.listen-address=127.0.0.1:{pport}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp / "prometheus.log", "w"),  # noqa: SIM115
        )
        url = f"http://127.0.0.1:{pport}/metrics"
        started = time.monotonic()
        while time.monotonic() - started < 70:  # rate[1m] windows full, first scrapes settled
            if time.monotonic() > deadline:
                raise TimeoutError("prometheus did not settle before the deadline")
            time.sleep(2)
        sums: list[float] = []
        while len(sums) < readings and time.monotonic() < deadline:
            vals = [float(v) for v in _DUR.findall(_get(url))]
            if vals:
                sums.append(sum(vals))
            time.sleep(STEP)
        q = _get(f"http://127.0.0.1:{pport}/api/v1/query?query=count(ALERTS)")
        active = re.search(r'"value":\[[^,]+,"(\d+)"\]', q)
        return {"eval_s": statistics.median(sums), "readings": float(len(sums)),
                "active": float(active.group(1)) if active else 0.0}
    finally:
        for p in (prom, target):
            if p is not None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--services", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prometheus", default="/usr/bin/prometheus")
    args = ap.parse_args(argv)
    deadline = time.monotonic() + 240
    with tempfile.TemporaryDirectory(prefix="bench_rules_") as d:
        tmp = Path(d)
        iw = bench_inferwatch(args.services, tmp, args.rounds)
        print(f"inferwatch: {iw['series']:.0f} series, {iw['samples']:.0f} samples written to SQLite "
              f"in {iw['write_s']:.1f}s", flush=True)
        if not os.access(args.prometheus, os.X_OK):
            print(f"prometheus not found at {args.prometheus}; inferwatch only: {iw['eval_s'] * 1e3:.1f} ms")
            return 1
        pr = bench_prometheus(args.prometheus, args.services, tmp, 6, deadline)
    ratio = iw["eval_s"] / pr["eval_s"]
    print()
    print("| one evaluation of the default pack (12 rules) | series | median | active alerts |")
    print("|---|---|---|---|")
    print(f"| inferwatch (SQLite store, native PromQL subset) | {iw['series']:.0f} | "
          f"{iw['eval_s'] * 1e3:.1f} ms | {iw['active']:.0f} |")
    print(f"| Prometheus 2.42 (rule_group_last_duration, summed) | {iw['series']:.0f} | "
          f"{pr['eval_s'] * 1e3:.1f} ms | {pr['active']:.0f} |")
    print(f"\nratio inferwatch / Prometheus: {ratio:.2f}x (target: within 3x)")
    what = f"One evaluation of the default pack, {iw['series']:,.0f} series"
    if iw["active"] == pr["active"]:
        what += f" ({iw['active']:,.0f} alerts from both)"
    _results.record("Rules and notifications", what, f"{iw['eval_s'] * 1e3:,.1f} ms",
                    f"Prometheus 2.42: {pr['eval_s'] * 1e3:,.1f} ms", f"{ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
