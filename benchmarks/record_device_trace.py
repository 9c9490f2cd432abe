"""Record a real device-like trace for the edge benchmark: a gzip'ed OpenMetrics file.

    python benchmarks/record_device_trace.py --minutes 25 --out benchmarks/traces/device-15s.om.gz
    python benchmarks/record_device_trace.py --shape bursty --minutes 16 \
        --out benchmarks/traces/bursty-15s-16m.om.gz

``--shape`` picks the device's story: ``steady`` (the default: a wandering request rate),
``bursty`` (mostly idle, sudden bursts of 10 to 40 requests a second for 10 to 40 s: sparse,
jumping counters), ``idle`` (one request every few minutes: counters that almost never move)
or ``restart`` (the steady load, with the app and its exporter restarted every 4 minutes:
counter resets).

Runs on loopback, each for ``--minutes`` (bounded):

* Debian's ``prometheus-node-exporter`` (the host as a device's node_exporter sees it);
* ``inferwatch exporter --pid APP`` (host, the app process, GPUs when NVML has any);
* an SDK-instrumented WSGI model server (``Monitor.wsgi``, stages, predictions) with a load
  generator of real HTTP requests whose rate wanders between about 1 and 12 per second, with
  bursts, a slow spell and ~1 % errors;
* a real ``prometheus`` scraping all three every ``--scrape`` seconds (15 s, as a device's agent).

At the end the raw samples are read back from Prometheus (a range selector over the whole
run, so every scraped point with its own timestamp) with the types from
``/api/v1/metadata``, and written as the OpenMetrics text that ``promtool tsdb
create-blocks-from openmetrics`` reads (``# TYPE``, timestamps in seconds, ``# EOF``).
Prometheus's own synthetic series (``up``, ``scrape_*``) and the ``instance`` label
(random loopback ports) are left out: a device's agent has neither.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import math
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

APP = r'''
import math, random, sys, threading, time
from wsgiref.simple_server import make_server, WSGIRequestHandler
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIServer
from inferwatch import Monitor

monitor = Monitor(service="detector", model="yolo-lite", version="v7")
rng = random.Random(7)

def predict(environ, start_response):
    if environ["PATH_INFO"] == "/metrics":
        start_response("200 OK", [("content-type", "text/plain; version=0.0.4")])
        return [monitor.metrics_text().encode()]
    slow = environ.get("QUERY_STRING", "") == "slow"
    with monitor.stage("preprocess"):
        time.sleep(rng.uniform(0.001, 0.004))
    with monitor.stage("inference"):
        time.sleep(rng.lognormvariate(math.log(0.015 if not slow else 0.08), 0.4))
    conf = min(0.999, max(0.01, rng.betavariate(8, 2)))
    monitor.observe_prediction({"brightness": rng.gauss(0.5, 0.1)}, confidence=conf)
    if rng.random() < 0.01:
        start_response("500 Internal Server Error", [("content-type", "text/plain")])
        return [b"error"]
    start_response("200 OK", [("content-type", "application/json")])
    return [b'{"score": %.3f}' % conf]

class Quiet(WSGIRequestHandler):
    def log_message(self, *a): pass

class Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True

srv = make_server("127.0.0.1", int(sys.argv[1]), monitor.wsgi(predict), server_class=Server,
                  handler_class=Quiet)
srv.serve_forever()
'''

DROP_NAMES = ("up", "scrape_duration_seconds", "scrape_samples_scraped",
              "scrape_samples_post_metric_relabeling", "scrape_series_added")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, deadline: float) -> None:
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"{url} did not answer in time")


def _request(port: int, query: str = "") -> None:
    with contextlib.suppress(OSError):  # a 500 from the app raises HTTPError: counted by the app, fine
        urllib.request.urlopen(f"http://127.0.0.1:{port}/predict{query}", timeout=5).read()


def load_bursty(port: int, stop: threading.Event, rng: random.Random) -> None:
    """Quiet for 30 s to 3 minutes, then a burst of 10-40 requests a second for 10-40 s."""
    while not stop.wait(rng.uniform(30, 180)):
        rate, end = rng.uniform(10, 40), time.monotonic() + rng.uniform(10, 40)
        while time.monotonic() < end and not stop.is_set():
            _request(port)
            stop.wait(rng.expovariate(rate))


def load_idle(port: int, stop: threading.Event, rng: random.Random) -> None:
    """One request every 1 to 6 minutes."""
    while not stop.wait(rng.uniform(60, 360)):
        _request(port)


def load(port: int, stop: threading.Event, t0: float, shape: str = "steady") -> None:
    """Real HTTP requests at a wandering rate: a slow sine, bursts, one slow spell."""
    rng = random.Random(11)
    if shape == "bursty":
        return load_bursty(port, stop, rng)
    if shape == "idle":
        return load_idle(port, stop, rng)
    while not stop.is_set():
        minutes = (time.monotonic() - t0) / 60
        rate = 6 + 5 * math.sin(minutes / 4 * 2 * math.pi)
        if int(minutes) % 7 == 3:
            rate *= 1.8  # a burst minute
        slow = 9 <= minutes < 12
        _request(port, "?slow" if slow else "")
        stop.wait(rng.expovariate(max(rate, 0.5)))


def prom_get(base: str, path: str, **params: str) -> Any:
    url = f"{base}{path}?{urllib.parse.urlencode(params)}"
    with urllib.request.urlopen(url, timeout=120) as r:
        return json.load(r)["data"]


def family_of(name: str, types: dict[str, str]) -> tuple[str, str]:
    """(family, type) of a sample name, from Prometheus's metadata."""
    if name in types:
        kind = types[name]
        if kind == "counter" and name.endswith("_total"):
            return name[: -len("_total")], "counter"
        return name, kind
    for suffix in ("_bucket", "_sum", "_count", "_total", "_created"):
        base = name[: -len(suffix)]
        if name.endswith(suffix) and base in types:
            return base, types[base]
    return name, "unknown"


def _fmt(v: str) -> str:
    return v  # Prometheus's API already prints "NaN", "+Inf" the OpenMetrics way


def write_openmetrics(base: str, seconds: int, out: Path) -> dict[str, int]:
    meta = prom_get(base, "/api/v1/metadata")
    types = {name: entries[0]["type"] for name, entries in meta.items() if entries}
    result = prom_get(base, "/api/v1/query", query=f'{{__name__=~".+"}}[{seconds + 60}s]')["result"]
    families: dict[str, tuple[str, list[tuple[dict[str, str], list[list[Any]]]]]] = {}
    for series in result:
        labels = dict(series["metric"])
        name = labels.pop("__name__")
        labels.pop("instance", None)
        if name in DROP_NAMES:
            continue
        fam, kind = family_of(name, types)
        families.setdefault(fam, (kind, []))[1].append(({"__name__": name, **labels}, series["values"]))
    counts = {"series": 0, "samples": 0}
    with gzip.open(out, "wt", compresslevel=9) as f:
        for fam in sorted(families):
            kind, members = families[fam]
            f.write(f"# TYPE {fam} {kind}\n")
            for labels, values in sorted(members, key=lambda m: sorted(m[0].items())):
                name = labels.pop("__name__")
                lab = ",".join(f'{k}="{_esc(v)}"' for k, v in sorted(labels.items()))
                head = f"{name}{{{lab}}}" if lab else name
                counts["series"] += 1
                for t, v in values:
                    f.write(f"{head} {_fmt(v)} {t}\n")
                    counts["samples"] += 1
        f.write("# EOF\n")
    return counts


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def start_app(work: Path, ports: dict[str, int], env: dict[str, str], log: Any,
              ) -> list[subprocess.Popen[bytes]]:
    """The app and the ``inferwatch exporter`` watching its process."""
    app = subprocess.Popen([sys.executable, str(work / "app.py"), str(ports["app"])], stdout=log,
                           stderr=log, env=env)
    iw = shutil.which("inferwatch") or str(Path(sys.executable).parent / "inferwatch")
    exporter = subprocess.Popen([iw, "exporter", "--port", str(ports["exporter"]), "--pid", str(app.pid)],
                                stdout=log, stderr=log, env=env)
    return [app, exporter]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--minutes", type=float, default=25.0)
    ap.add_argument("--scrape", type=float, default=15.0, help="scrape interval, seconds")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--shape", choices=("steady", "bursty", "idle", "restart"), default="steady")
    args = ap.parse_args(argv)
    if not 0 < args.minutes <= 120:
        raise SystemExit("--minutes must be in (0, 120]")
    work = Path(tempfile.mkdtemp(prefix="iw-trace-"))
    ports = {k: free_port() for k in ("node", "exporter", "app", "prom")}
    procs: list[subprocess.Popen[bytes]] = []
    stop = threading.Event()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    try:
        (work / "app.py").write_text(APP)
        log = (work / "log.txt").open("wb")
        procs.append(subprocess.Popen(
            ["prometheus-node-exporter", f"--web.listen-address=127.0.0.1:{ports['node']}"],
            stdout=log, stderr=log))
        app = start_app(work, ports, env, log)
        procs.extend(app)
        step = f"{args.scrape:g}s"
        (work / "prometheus.yml").write_text(
            f"global: {{scrape_interval: {step}, scrape_timeout: {min(args.scrape, 10):g}s}}\n"
            "scrape_configs:\n"
            f"  - {{job_name: node, static_configs: [{{targets: ['127.0.0.1:{ports['node']}']}}]}}\n"
            f"  - {{job_name: inferwatch_exporter, static_configs: "
            f"[{{targets: ['127.0.0.1:{ports['exporter']}']}}]}}\n"
            f"  - {{job_name: app, static_configs: [{{targets: ['127.0.0.1:{ports['app']}']}}]}}\n")
        procs.append(subprocess.Popen(
            ["prometheus", f"--config.file={work / 'prometheus.yml'}", f"--storage.tsdb.path={work / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{ports['prom']}"], stdout=log, stderr=log))
        deadline = time.monotonic() + 60
        for k in ("app", "node", "exporter"):
            wait_http(f"http://127.0.0.1:{ports[k]}/metrics", deadline)
        wait_http(f"http://127.0.0.1:{ports['prom']}/-/ready", deadline)
        t0 = time.monotonic()
        threading.Thread(target=load, args=(ports["app"], stop, t0, args.shape), daemon=True).start()
        seconds = int(args.minutes * 60)
        print(f"recording {seconds} s ({args.shape}), scrape every {step}, work dir {work}", flush=True)
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            time.sleep(min(left, 240.0))
            if args.shape == "restart" and end - time.monotonic() > 30:  # app and exporter restart
                for p in app:
                    p.send_signal(signal.SIGTERM)
                    p.wait(10)
                    procs.remove(p)
                app = start_app(work, ports, env, log)
                procs.extend(app)
                wait_http(f"http://127.0.0.1:{ports['app']}/metrics", time.monotonic() + 30)
        stop.set()
        args.out.parent.mkdir(parents=True, exist_ok=True)
        counts = write_openmetrics(f"http://127.0.0.1:{ports['prom']}", seconds, args.out)
        print(f"wrote {args.out}: {counts['series']} series, {counts['samples']} samples, "
              f"{args.out.stat().st_size} bytes", flush=True)
    finally:
        stop.set()
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
