"""A storm as a team meets it: 10,000 alerts posted to a running ``inferwatch serve`` and Alertmanager.

Each round starts a fresh ``inferwatch serve`` (history on, the route escalating through a
one-step escalation, so every group opens an on-call episode) and a fresh Alertmanager 0.25,
both delivering Alertmanager webhook JSON to the same kind of loopback fake. The storm is 10
alertnames x 1,000 instances over 10 services, grouped by ``[alertname, service]`` (100
groups), posted as Prometheus sends them: ``POST /api/v2/alerts`` in ten batches of 1,000.
The time is from the first post until the fake holds all 10,000 alerts, minus group_wait (1 s);
the server's CPU seconds over the same span are printed beside it (less moved by the load);
each round checks exactly 100 notifications and 10,000 alerts (none lost). The two run one
after the other in every round (the order alternates), so both see the same load.

    python benchmarks/bench_storm.py --rounds 5
"""

from __future__ import annotations

import argparse
import os
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

import _results
from bench_alerting import AM, GROUP_WAIT, Sink

TOKEN = "storm-bench-token"
N_ALERTS = 10_000


def _rfc3339(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"


def _batch(k: int) -> list[dict[str, object]]:
    # as Prometheus sends them right after an evaluation: startsAt now (a rule without ``for``, so
    # both wait group_wait; an older startsAt flushes at once), endsAt 4 resend delays ahead
    now = time.time()
    starts, ends = _rfc3339(now), _rfc3339(now + 240)
    return [{"labels": {"alertname": f"Storm{k}", "service": f"svc{i % 10}",
                        "instance": f"10.0.{i // 250}.{i % 250}:9000", "tier": "P1", "severity": "major",
                        "dimension": "service"},
             "annotations": {"summary": "storm"}, "startsAt": starts, "endsAt": ends,
             "generatorURL": f"http://prometheus:9090/graph?g0.expr=storm{k}"} for i in range(1000)]


class Serve:
    """``inferwatch serve`` in a fresh data directory, its route escalating to the fake."""

    def __init__(self, sink: Sink) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="bench-storm-"))
        cfg = self.dir / "inferwatch.yml"
        cfg.write_text(f"""
server: {{data_dir: '{self.dir / "data"}', api_token: {TOKEN}}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  inhibit_rules: []
  receivers: [{{name: hook, type: webhook, url: '{sink.url}'}}]
  escalations: [{{name: storm, steps: [{{after: 0s, notify: [hook]}}]}}]
  route: {{receiver: hook, group_by: [alertname, service], group_wait: {GROUP_WAIT:g}s, group_interval: 5m,
          escalation: storm}}
""")
        argv = [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", "127.0.0.1:0"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("INFERWATCH_", "OTEL_"))}
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env=env)
        assert self.proc.stderr is not None
        end = time.monotonic() + 60
        while time.monotonic() < end:
            ready, _, _ = select.select([self.proc.stderr], [], [], 1.0)
            line = self.proc.stderr.readline() if ready else ""
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+) ", line)
            if m:
                self.url = m.group(1)
                return
            if self.proc.poll() is not None:
                break
        raise RuntimeError("inferwatch serve did not start")

    def close(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        shutil.rmtree(self.dir, ignore_errors=True)


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) the process has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _storm(url: str, sink: Sink, headers: dict[str, str], pid: int) -> dict[str, float]:
    with httpx.Client(timeout=60, headers=headers) as client:
        cpu0 = _cpu(pid)
        t0 = time.monotonic()
        for k in range(10):  # 10 alertnames x 1,000 instances, one batch per alertname
            client.post(url + "/api/v2/alerts", json=_batch(k)).raise_for_status()
        posted = time.monotonic() - t0
        ok = sink.wait(lambda: sink.alerts() >= N_ALERTS, 30)
        took = time.monotonic() - t0
        cpu = _cpu(pid) - cpu0
    return {"ok": float(ok and len(sink.got) == 100 and sink.alerts() == N_ALERTS), "cpu": cpu,
            "seconds": took - GROUP_WAIT, "posted": posted, "notifications": len(sink.got),
            "alerts": sink.alerts()}


def iw_round(profile: str | None = None) -> dict[str, float]:
    sink = Sink()
    srv = Serve(sink)
    spy = None
    if profile:  # py-spy (not a dependency: pip install py-spy) samples every thread of the server
        spy = subprocess.Popen([shutil.which("py-spy") or "py-spy", "record", "--pid", str(srv.proc.pid),
                                "--rate", "250", "--format", "raw", "--output", profile, "--threads"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2)  # py-spy attaching
    try:
        return _storm(srv.url, sink, {"Authorization": f"Bearer {TOKEN}"}, srv.proc.pid)
    finally:
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        srv.close()


def am_round(am_bin: str) -> dict[str, float]:
    sink = Sink()
    am = AM(am_bin, sink)
    try:
        return _storm(am.url, sink, {}, am.proc.pid)
    finally:
        am.close()


STORM_ROW = ("The same storm end to end: posted to `POST /api/v2/alerts` of a running `serve` (history and "
             "escalation on) until all 10,000 reached the webhook, none lost, median of the rounds")


def _said(x: dict[str, float]) -> str:
    return (f"{x['notifications']:.0f} / {x['alerts']:.0f} in {x['seconds']:.2f} s "
            f"(posted in {x['posted']:.2f} s, server CPU {x['cpu']:.2f} s)")


def _spread(xs: list[float]) -> str:
    return f"median {statistics.median(xs):5.2f} s (min {min(xs):.2f}, max {max(xs):.2f}, n={len(xs)})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", metavar="FILE",
                    help="one inferwatch round sampled by py-spy (collapsed stacks) into FILE")
    args = ap.parse_args()
    if args.profile:
        print(iw_round(args.profile))
        return 0
    am_bin = shutil.which("prometheus-alertmanager") or shutil.which("alertmanager")
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    iw, am, ratios, cpu_ratios, ok = [], [], [], [], True
    for r in range(args.rounds):
        first_iw = r % 2 == 0
        a = iw_round() if first_iw else None
        b = am_round(am_bin) if am_bin else None
        a = a or iw_round()
        ok = ok and bool(a["ok"])
        iw.append(a["seconds"])
        line = f"round {r + 1}: inferwatch {_said(a)}"
        if b is not None:
            line += f"; alertmanager {_said(b)}"
            if b["ok"]:
                am.append(b["seconds"])
                ratios.append(a["seconds"] / max(b["seconds"], 1e-9))
                cpu_ratios.append(a["cpu"] / max(b["cpu"], 1e-9))
                line += f"; ratio {ratios[-1]:.2f}"
            else:  # under load Alertmanager's dispatcher can flush a group before all its alerts are in
                line += " (incomplete within the wait: no ratio this round)"
        print(line, flush=True)
    print(f"inferwatch    {_spread(iw)}")
    if am_bin is None:
        print("alertmanager not installed: peer skipped")
    elif ratios:
        print(f"alertmanager  {_spread(am)}")
        print(f"ratio (inferwatch / alertmanager, per round): median {statistics.median(ratios):.2f} "
              f"(min {min(ratios):.2f}, max {max(ratios):.2f}, n={len(ratios)})")
        print(f"server CPU ratio (per round): median {statistics.median(cpu_ratios):.2f} "
              f"(min {min(cpu_ratios):.2f}, max {max(cpu_ratios):.2f})")
    load = f"load average {os.getloadavg()[0]:.1f}"
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    if ok:
        _results.record("Rules and notifications", STORM_ROW,
                        f"{statistics.median(iw):.2f} s ({min(iw):.2f}–{max(iw):.2f})",
                        f"Alertmanager 0.25: {statistics.median(am):.2f} s ({min(am):.2f}–{max(am):.2f})"
                        if ratios else None,
                        f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f} per round; "
                        f"server CPU {statistics.median(cpu_ratios):.2f}; {load})" if ratios else None,
                        note=f"{len(iw)} rounds")
    print("storm check (100 grouped notifications, 10,000 alerts, none lost, every round):",
          "OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
