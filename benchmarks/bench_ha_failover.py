"""An HA pair on PostgreSQL: failover time over repeated kill -9, and delivery latency on
PostgreSQL beside SQLite, in one run.

Failover: two ``inferwatch serve`` (replicas ``a`` and ``b``, the same config but for the
name, the data directory and the receiver's path, so each message says who sent it) share a
real PostgreSQL (``initdb`` + ``pg_ctl`` in a temporary directory, loopback). One P0 alert
reaches both; its escalation repeats a step every second, so the leader always has something
due. The leader is killed with SIGKILL; the failover time is from the kill to the first
message from the other replica. The killed one is started again (it follows) before the next
kill. The bound to meet: ``lease`` + one evaluation interval.

Delivery latency: one ``serve`` with its state in SQLite, then one with ``ha:`` on the same
PostgreSQL (a replica alone takes the lease); N alerts, one at a time, from ``POST
/api/v1/alertmanager`` to the webhook's arrival (group_wait 0), p50 and p99 of each.

    python benchmarks/bench_ha_failover.py [--kills 10] [--alerts 100] [--lease 5]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import select
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

import _results

TOKEN = "bench-ha-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
INTERVAL_S = 1.0


class Hooks:
    """A loopback webhook: (arrival, path, body) of every request."""

    def __init__(self) -> None:
        self.got: list[tuple[float, str, dict]] = []  # type: ignore[type-arg]
        self.cond = threading.Condition()
        hooks = self

        class H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with hooks.cond:
                    hooks.got.append((time.monotonic(), self.path, body))
                    hooks.cond.notify_all()
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *a: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def first_after(self, t: float, path: str, timeout: float = 120.0) -> float | None:
        """When the first request to ``path`` after ``t`` came (None: none within ``timeout``)."""
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                hit = next((at for at, p, _ in self.got if at > t and p == path), None)
                if hit is not None or time.monotonic() > end:
                    return hit
                self.cond.wait(max(end - time.monotonic(), 0.01))

    def last_path(self) -> str:
        with self.cond:
            return self.got[-1][1] if self.got else ""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Postgres:
    """A throwaway cluster on loopback (as root it runs as ``nobody``: initdb refuses root)."""

    def __init__(self) -> None:
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not bins:
            sys.exit("bench_ha_failover: PostgreSQL is not installed (apt-get install postgresql)")
        self.bin = Path(bins[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="iw-bench-pg-"))
        self.port = _free_port()
        self.prefix: list[str] = []
        if os.geteuid() == 0:
            shutil.chown(self.root, "nobody")
            os.chmod(self.root, 0o755)
            self.prefix = ["runuser", "-u", "nobody", "--"]
        self._run("initdb", "-D", str(self.root / "data"), "-A", "trust", "-U", "postgres", "--no-sync")
        self._run("pg_ctl", "-D", str(self.root / "data"), "-l", str(self.root / "log"), "-w", "-o",
                  f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1", "start")

    def _run(self, tool: str, *args: str) -> None:
        subprocess.run([*self.prefix, str(self.bin / tool), *args], check=True, capture_output=True,
                       cwd=self.root, timeout=120)

    def new_database(self, name: str) -> str:
        import psycopg

        admin = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(admin, autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        self._run("pg_ctl", "-D", str(self.root / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def _serve(cfg: Path) -> tuple[subprocess.Popen[str], str]:
    env = {k: v for k, v in os.environ.items() if k not in ("INFERWATCH_CONFIG", "INFERWATCH_DATA_DIR")}
    cmd = [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", "127.0.0.1:0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    end, seen = time.monotonic() + 120, []
    while time.monotonic() < end:
        ready, _, _ = select.select([proc.stderr], [], [], 1.0)
        line = proc.stderr.readline() if ready else ""
        seen.append(line)
        if m := re.search(r"listening on (http://127\.0\.0\.1:\d+) ", line):
            threading.Thread(target=proc.stderr.read, daemon=True).start()  # keep the pipe drained
            return proc, m.group(1)
        if ready and not line:
            break
    proc.kill()
    raise SystemExit(f"serve {cfg} did not start: {''.join(seen)}")


def _config(root: Path, name: str, hooks: str, *, db: str = "", lease: float = 5.0,
            repeat: bool = True) -> Path:
    ha = f"ha: {{database: '{db}', replica: {name}, lease: {lease:g}s}}\n" if db else ""
    steps = ", ".join(f"{{after: {101 * k}s, notify: [hook], repeat: 100, every: 1s}}" for k in range(10))
    esc = f"  escalations: [{{name: p0, steps: [{steps}]}}]\n" if repeat else ""  # a step every second
    route = ", escalation: p0" if repeat else ""
    cfg = root / f"{name}.yml"
    cfg.write_text(f"""
server: {{data_dir: '{root / name}', api_token: {TOKEN}, evaluation_interval: {INTERVAL_S:g}s}}
{ha}rules: {{default_pack: false}}
alerting:
  default_actions: false
  receivers: [{{name: hook, type: webhook, url: '{hooks}/{name}'}}]
{esc}  route: {{receiver: hook, group_by: [alertname], group_wait: 0s, group_interval: 1h{route}}}
""")
    return cfg


def _post(c: httpx.Client, url: str, name: str) -> None:
    alert = {"status": "firing", "labels": {"alertname": name, "service": "ranker", "tier": "P0"},
             "annotations": {"summary": name}}
    r = c.post(f"{url}/api/v1/alertmanager", headers=AUTH, json={"version": "4", "alerts": [alert]})
    r.raise_for_status()


def failover(pg: Postgres, root: Path, kills: int, lease: float) -> list[float]:
    hooks = Hooks()
    db = pg.new_database("failover")
    cfgs = {n: _config(root, n, hooks.url, db=db, lease=lease) for n in ("a", "b")}
    procs: dict[str, tuple[subprocess.Popen[str], str]] = {}
    procs["a"] = _serve(cfgs["a"])
    time.sleep(lease / 2)  # a takes the lease first (a benchmark's pacing, not a test's synchronisation)
    procs["b"] = _serve(cfgs["b"])
    times: list[float] = []
    try:
        with httpx.Client(timeout=60) as c:
            for _, url in procs.values():
                _post(c, url, "Down")
            for i in range(kills):
                t = time.monotonic()
                with hooks.cond:  # the leader sends every second: the latest message names it
                    hooks.cond.wait_for(lambda t=t: bool(hooks.got) and hooks.got[-1][0] > t, 60)
                leader = hooks.last_path().strip("/")
                other = "b" if leader == "a" else "a"
                proc, _ = procs[leader]
                t0 = time.monotonic()
                proc.kill()
                proc.wait(30)
                t1 = hooks.first_after(t0, f"/{other}")
                if t1 is None:
                    raise SystemExit(f"kill {i + 1}: no message from {other} within 120 s")
                times.append(t1 - t0)
                print(f"  kill {i + 1}: {leader} killed, {other} sent after {t1 - t0:.2f} s", flush=True)
                procs[leader] = _serve(cfgs[leader])  # back as the follower
                _post(c, procs[leader][1], "Down")  # its alerts again, as a Prometheus re-sends them
                time.sleep(2 * INTERVAL_S)  # it is seen (replicas) before the next kill
    finally:
        for proc, _ in procs.values():
            proc.kill()
            proc.wait(30)
        hooks.server.shutdown()
    return times


def latency(root: Path, name: str, n: int, db: str = "") -> list[float]:
    hooks = Hooks()
    proc, url = _serve(_config(root, name, hooks.url, db=db, repeat=False))
    out = []
    try:
        with httpx.Client(timeout=60) as c:
            for i in range(n):
                t0 = time.monotonic()
                _post(c, url, f"Latency{i}")
                t1 = hooks.first_after(t0, f"/{name}", 60)
                if t1 is None:
                    raise SystemExit(f"{name}: alert {i} never arrived")
                out.append(t1 - t0)
    finally:
        proc.kill()
        proc.wait(30)
        hooks.server.shutdown()
    return out


def _pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, round(q * (len(s) - 1)))]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kills", type=int, default=10)
    p.add_argument("--alerts", type=int, default=100)
    p.add_argument("--lease", type=float, default=5.0)
    args = p.parse_args()
    pg = Postgres()
    root = Path(tempfile.mkdtemp(prefix="iw-bench-ha-"))
    try:
        print(f"failover: lease {args.lease:g} s, evaluation interval {INTERVAL_S:g} s, {args.kills} kills")
        times = failover(pg, root, args.kills, args.lease)
        sqlite = latency(root, "sqlite", args.alerts)
        postgres = latency(root, "postgres", args.alerts, db=pg.new_database("latency"))
    finally:
        pg.close()
        shutil.rmtree(root, ignore_errors=True)
    bound = args.lease + INTERVAL_S
    print(f"failover (kill -9 -> first message from the new leader) over {len(times)} kills: "
          f"median {statistics.median(times):.2f} s, max {max(times):.2f} s "
          f"(bound: lease + one interval = {bound:g} s: {'met' if max(times) <= bound else 'NOT met'})")
    for label, xs in (("SQLite", sqlite), ("PostgreSQL", postgres)):
        print(f"delivery latency, {label}: p50 {_pct(xs, 0.5) * 1000:.1f} ms, "
              f"p99 {_pct(xs, 0.99) * 1000:.1f} ms ({len(xs)} alerts)")
    print(f"PostgreSQL / SQLite: p50 {_pct(postgres, 0.5) / _pct(sqlite, 0.5):.2f}, "
          f"p99 {_pct(postgres, 0.99) / _pct(sqlite, 0.99):.2f}")
    area = "Rules and notifications"
    _results.record(area, "HA pair on PostgreSQL: failover, kill -9 of the leader → first message from the "
                    f"new leader, {len(times)} kills (lease {args.lease:g} s, {INTERVAL_S:g} s evaluation "
                    "interval): median / max",
                    f"{statistics.median(times):.2f} s / {max(times):.2f} s (bound: lease + one interval = "
                    f"{bound:g} s, {'met' if max(times) <= bound else 'NOT met'})",
                    "(Alertmanager's cluster has no leader: a peer waits its position × `peer_timeout`, "
                    "15 s by default, then checks the log)", None)
    _results.record(area, "Delivery latency, alert in (`POST /api/v1/alertmanager`) → webhook, p50 / p99, "
                    "alerting state in PostgreSQL",
                    f"{_pct(postgres, 0.5) * 1000:.1f} ms / {_pct(postgres, 0.99) * 1000:.1f} ms",
                    f"the same `serve` on SQLite, same run: {_pct(sqlite, 0.5) * 1000:.1f} ms / "
                    f"{_pct(sqlite, 0.99) * 1000:.1f} ms",
                    f"{_pct(postgres, 0.5) / _pct(sqlite, 0.5):.2f} / "
                    f"{_pct(postgres, 0.99) / _pct(sqlite, 0.99):.2f}")


if __name__ == "__main__":
    main()
