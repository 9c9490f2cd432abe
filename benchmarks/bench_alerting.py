"""Notification pipeline: firing -> receiver latency, and a 10,000-alert storm; inferwatch vs Alertmanager.

Both deliver to the same loopback webhook fake (Alertmanager's webhook JSON).
Latency: from the call that hands a newly firing alert over (``Pipeline.send``
for inferwatch, ``POST /api/v2/alerts`` for Alertmanager) until the fake has
the request, minus group_wait. Storm: 10,000 alerts (10 alertnames x 1,000
instances over 10 services), grouped by [alertname, service]: 100 groups.
"With one receiver hanging": every alert also goes (``continue: true``) to a
second webhook that accepts the request and never answers; the latency is the
healthy receiver's. inferwatch runs attempts on threads, as ``serve`` does.
"""

from __future__ import annotations

import json
import random
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

import _results
from inferwatch.alerting import Pipeline, ThreadExecutor
from inferwatch.config import parse_config
from inferwatch.model import Labels, SystemClock
from inferwatch.rules import Alert

N_LATENCY = 20
GROUP_WAIT = 1.0


class Sink:
    """Loopback webhook receiver recording (arrival time, body); ``hang`` never answers (until closed)."""

    def __init__(self, hang: bool = False) -> None:
        self.got: list[tuple[float, dict]] = []  # type: ignore[type-arg]
        self.cond = threading.Condition()
        self.release = threading.Event()
        sink = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with sink.cond:
                    sink.got.append((time.monotonic(), body))
                    sink.cond.notify_all()
                if hang:
                    sink.release.wait(60)
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait(self, pred, timeout: float) -> bool:  # type: ignore[no-untyped-def]
        end = time.monotonic() + timeout
        with self.cond:
            while not pred():
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self.cond.wait(left)
        return True

    def alerts(self) -> int:
        return sum(len(b["alerts"]) for _, b in self.got)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _alert(name: str, inst: int, service: str) -> Alert:
    instance = f"10.0.{inst // 250}.{inst % 250}:9000"
    return Alert(Labels({"alertname": name, "service": service, "instance": instance,
                         "tier": "P1", "severity": "major", "dimension": "service"}),
                 {"summary": "storm"}, time.time(), None, 1.0)


def _inferwatch(sink: Sink, group_wait: float, stuck: Sink | None = None) -> tuple[Pipeline, threading.Event]:
    routes = "[]" if stuck is None else "[{receiver: stuck, continue: true}, {receiver: hook}]"
    stuck_receiver = "" if stuck is None else f", {{name: stuck, type: webhook, url: '{stuck.url}'}}"
    cfg = parse_config(f"""
alerting:
  route: {{receiver: hook, group_wait: {group_wait}, group_interval: 5m, routes: {routes}}}
  receivers: [{{name: hook, type: webhook, url: '{sink.url}'}}{stuck_receiver}]
  default_actions: false
  inhibit_rules: []
""").alerting
    p = Pipeline(cfg, clock=SystemClock(), rng=random.Random(0), executor=ThreadExecutor())
    stop, wake = threading.Event(), threading.Event()

    def loop() -> None:  # the server's loop: sleep until the pipeline's next wakeup
        while not stop.is_set():
            nxt = p.next_wakeup()
            delay = 0.5 if nxt is None else max(0.0, nxt - time.time())
            wake.wait(min(delay, 0.5))
            wake.clear()
            p.tick(time.time())

    threading.Thread(target=loop, daemon=True).start()
    p.wake = wake  # type: ignore[attr-defined]
    p.set_waker(wake.set)  # a finished send is recorded at once, as PipelineRunner does
    return p, stop


def iw_latency(hanging: bool = False) -> list[float]:
    sink = Sink()
    stuck = Sink(hang=True) if hanging else None
    p, stop = _inferwatch(sink, GROUP_WAIT, stuck)
    out = []
    for i in range(N_LATENCY):
        t0 = time.monotonic()
        p.send([_alert(f"Lat{i}", i, "svc")], time.time())
        p.wake.set()  # type: ignore[attr-defined]
        assert sink.wait(lambda i=i: len(sink.got) > i, 10)
        out.append(sink.got[i][0] - t0 - GROUP_WAIT)
    stop.set()
    if stuck is not None:
        stuck.release.set()
    return out


def iw_storm(trace: bool) -> dict[str, float]:
    sink = Sink()
    p, stop = _inferwatch(sink, GROUP_WAIT)
    alerts = [_alert(f"Storm{k}", i, f"svc{i % 10}") for k in range(10) for i in range(1000)]
    if trace:
        tracemalloc.start()
    t0 = time.monotonic()
    for j in range(0, len(alerts), 1000):  # ten evaluator batches
        p.send(alerts[j:j + 1000], time.time())
    ok = sink.wait(lambda: sink.alerts() >= 10_000, 60)
    took = time.monotonic() - t0
    peak = tracemalloc.get_traced_memory()[1] if trace else 0
    if trace:
        tracemalloc.stop()
    stop.set()
    return {"ok": ok, "notifications": len(sink.got), "alerts": sink.alerts(), "seconds": took - GROUP_WAIT,
            "peak_mib": peak / 2**20}


class AM:
    def __init__(self, am_bin: str, sink: Sink) -> None:
        self.dir = tempfile.mkdtemp(prefix="bench-am-")
        self.port = _free_port()
        cfg = {"route": {"receiver": "hook", "group_by": ["alertname", "service"], "group_wait": "1s",
                         "group_interval": "5m", "repeat_interval": "4h"},
               "receivers": [{"name": "hook", "webhook_configs": [{"url": sink.url}]}]}
        Path(self.dir, "am.yml").write_text(json.dumps(cfg))
        self.log = open(Path(self.dir, "log"), "wb")  # noqa: SIM115
        argv = [am_bin, f"--config.file={self.dir}/am.yml", f"--storage.path={self.dir}",
                f"--web.listen-address=127.0.0.1:{self.port}", "--cluster.listen-address="]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=self.log)
        self.url = f"http://127.0.0.1:{self.port}"
        end = time.monotonic() + 30
        while time.monotonic() < end:
            try:
                if httpx.get(self.url + "/-/ready", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            threading.Event().wait(0.1)
        raise RuntimeError("alertmanager not ready")

    def post(self, alerts: list[Alert]) -> None:
        body = [{"labels": a.labels.to_dict(), "annotations": dict(a.annotations)} for a in alerts]
        httpx.post(self.url + "/api/v2/alerts", json=body, timeout=30).raise_for_status()

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def am_latency(am_bin: str) -> list[float]:
    sink = Sink()
    am = AM(am_bin, sink)
    out = []
    try:
        for i in range(N_LATENCY // 2):
            t0 = time.monotonic()
            am.post([_alert(f"Lat{i}", i, "svc")])
            assert sink.wait(lambda i=i: len(sink.got) > i, 15)
            out.append(sink.got[i][0] - t0 - GROUP_WAIT)
    finally:
        am.close()
    return out


def am_storm(am_bin: str) -> dict[str, float]:
    sink = Sink()
    am = AM(am_bin, sink)
    alerts = [_alert(f"Storm{k}", i, f"svc{i % 10}") for k in range(10) for i in range(1000)]
    try:
        t0 = time.monotonic()
        for j in range(0, len(alerts), 1000):
            am.post(alerts[j:j + 1000])
        ok = sink.wait(lambda: sink.alerts() >= 10_000, 60)
        took = time.monotonic() - t0
        rss = _rss_of(am.proc.pid)
    finally:
        am.close()
    return {"ok": ok, "notifications": len(sink.got), "alerts": sink.alerts(), "seconds": took - GROUP_WAIT,
            "peak_mib": rss}


def _rss_of(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _ms(xs: list[float]) -> str:
    xs = sorted(xs)
    return f"p50 {statistics.median(xs) * 1000:7.1f} ms, max {xs[-1] * 1000:7.1f} ms (n={len(xs)})"


def main() -> int:
    am_bin = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    iw_l = iw_latency()
    iw_h = iw_latency(hanging=True)
    iw_s = iw_storm(trace=False)
    iw_s["peak_mib"] = iw_storm(trace=True)["peak_mib"]
    print(f"group_wait {GROUP_WAIT:g}s; latency = arrival at the webhook fake - hand-over - group_wait")
    print(f"{'':14}{'latency beyond group_wait':44}{'storm: notifications / alerts / s / memory'}")
    print(f"{'inferwatch':14}{_ms(iw_l):44}{iw_s['notifications']:4.0f} / {iw_s['alerts']:6.0f} / "
          f"{iw_s['seconds']:5.2f} s / peak traced {iw_s['peak_mib']:.1f} MiB")
    print(f"{'  one hanging':14}{_ms(iw_h):44}(the healthy receiver, while another never answers)")
    if am_bin is None:
        print("alertmanager not installed: peer skipped")
    else:
        am_l = am_latency(am_bin)
        am_s = am_storm(am_bin)
        print(f"{'alertmanager':14}{_ms(am_l):44}{am_s['notifications']:4.0f} / {am_s['alerts']:6.0f} / "
              f"{am_s['seconds']:5.2f} s / peak RSS {am_s['peak_mib']:.1f} MiB")
        print(f"ratio (inferwatch / alertmanager) p50 latency: "
              f"{statistics.median(iw_l) / max(statistics.median(am_l), 1e-9):.2f}; "
              f"storm time: {iw_s['seconds'] / max(am_s['seconds'], 1e-9):.2f}")
    ok = iw_s["ok"] and iw_s["notifications"] == 100 and iw_s["alerts"] == 10_000
    if ok:
        area = "Rules and notifications"
        p50 = statistics.median(iw_l) * 1e3
        am_p50 = statistics.median(am_l) * 1e3 if am_bin else None
        _results.record(area, "Notification latency beyond `group_wait`, p50", f"{p50:.1f} ms",
                        f"Alertmanager 0.25: {am_p50:.1f} ms" if am_p50 is not None else None,
                        f"{p50 / max(am_p50, 1e-9):.2f}" if am_p50 is not None else None)
        storm = iw_s["seconds"]
        am_storm_s = am_s["seconds"] if am_bin else None
        _results.record(area, "Storm: 10,000 alerts into 100 grouped notifications, none lost",
                        f"{storm:.2f} s",
                        f"Alertmanager 0.25: {am_storm_s:.2f} s" if am_storm_s else None,
                        f"{storm / am_storm_s:.2f} (one round each)" if am_storm_s else None)
        _results.record(area, "The healthy receiver's p50 while another never answers",
                        f"{statistics.median(iw_h) * 1e3:.1f} ms", "(Alertmanager not measured hanging)",
                        None)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"inferwatch process peak RSS {rss:.0f} MiB (Python, includes the benchmark itself)")
    ok = iw_s["ok"] and iw_s["notifications"] == 100 and iw_s["alerts"] == 10_000
    print("storm check (100 grouped notifications, 10,000 alerts, none lost):", "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
