"""A dynamic rule in a real `inferwatch serve`: learns a scraped NAB series, keeps it over a restart.

The target replays NAB's ``art_daily_jumpsup``, serving the row of the server's compressed
clock (one row per 5 minutes); it is scraped every 2m30s, so every evaluation (every 5
minutes) finds a sample within PromQL's 5-minute lookback. (Scraped every 5 minutes, the
scrape and evaluation schedules fall into step: a round that starts while the scrape of
the same instant is still being stored finds the last sample just over 5 minutes old, and
then none at all, round after round; `serve` warns of such a target.) The rule has no
static fallback, so an alert can only come from a learned band. A webhook receiver
records, for each notification, the row the target had reached. Every step waits on an
event (a row served, a notification, a line of the server's output), never on a sleep.
"""

from __future__ import annotations

import bisect
import contextlib
import http.server
import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from inferwatch.baseline import read_csv_series

pytestmark = pytest.mark.slow

FILE = "artificialWithAnomaly/art_daily_jumpsup.csv"
# replay from here: the server's start-up (seconds, its clock running) skips rows, then 2 days
# of learning (min_history), then a clean half day before the jump
FIRST = 2000
RESTART = 2860  # the server is stopped here (learned) and restarted
JUMP = 2988  # the injected level jump (its labelled window is rows 2787..3189)
LAST = 3189
SPEED = 6000.0  # 5 minutes of the server's clock in 50 ms
# After the restart: 5 minutes in 200 ms. The server's clock runs from the moment the process
# starts, so its start-up (imports, restoring the store and the bands: seconds on a loaded
# CI machine) skips rows; at 6000x a 6 s start-up skipped the 128 rows up to the jump and the
# 110 rows of the jump itself (no alert by the end), at 1500x it takes 26 s to get there.
SPEED_AFTER = 1500.0


@dataclass
class Replay:
    """A loopback target serving the NAB row of the server's current time, until ``stop_at``.

    The row follows the server's clock (read once through its API, then run at the same
    speed here, so a scrape costs no extra request), so the series keeps its daily phase,
    and the rows of a downtime are skipped as in life.
    """

    times: list[float]
    values: list[float]
    row: int = FIRST
    stop_at: int = RESTART
    url: str = ""
    clock: tuple[float, float] = (0.0, 0.0)  # the server's time at a monotonic instant here
    speed: float = SPEED
    announced: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    reached: dict[int, threading.Event] = field(default_factory=dict)

    def next_body(self) -> str | None:
        self.announced.wait(60)
        with self.lock:
            now = self.clock[0] + (time.monotonic() - self.clock[1]) * self.speed
            row = bisect.bisect_right(self.times, now) - 1
            self.row = max(self.row, row)
            for at, ev in self.reached.items():
                if self.row >= at:
                    ev.set()
            return None if row >= self.stop_at else f"nab_value {self.values[row]}\n"

    def follow(self, url: str, speed: float) -> None:
        """Read the clock of the server at ``url`` (it runs at ``speed``) and start serving."""
        before = time.monotonic()
        t = server_time(url)
        with self.lock:
            self.clock, self.speed = (t, (before + time.monotonic()) / 2), speed
        self.announced.set()

    def event(self, row: int) -> threading.Event:
        with self.lock:
            return self.reached.setdefault(row, threading.Event())


def server_time(url: str) -> float:
    """The server's clock: the evaluation time of an instant query (its default, now)."""
    data = httpx.get(f"{url}/api/v1/query", params={"query": "1"}, timeout=5).json()["data"]
    return float(data["result"][0])  # a scalar: [time, "1"]


@dataclass
class Hook:
    """A webhook receiver: each firing notification with the target row it arrived at."""

    replay: Replay
    firing: list[tuple[int, list[str]]] = field(default_factory=list)
    fired: threading.Event = field(default_factory=threading.Event)
    url: str = ""


def _serve_http(handler: type[http.server.BaseHTTPRequestHandler]) -> tuple[http.server.HTTPServer, str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


@contextlib.contextmanager
def serving(replay: Replay) -> Iterator[Hook]:
    """The replay's target and a webhook receiver on loopback, for the block's duration."""
    hook = Hook(replay)

    class Target(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = replay.next_body()
            data = (body or "replay paused\n").encode()
            self.send_response(200 if body is not None else 503)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            names = [a["labels"]["alertname"] for a in payload["alerts"] if a["status"] == "firing"]
            if names:
                with replay.lock:
                    hook.firing.append((replay.row, names))
                hook.fired.set()
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    servers = []
    for handler in (Target, Receiver):
        srv, url = _serve_http(handler)
        servers.append(srv)
        if handler is Target:
            replay.url = f"{url}/metrics"
        else:
            hook.url = f"{url}/hook"
    try:
        yield hook
    finally:
        for srv in servers:
            srv.shutdown()
            srv.server_close()


@pytest.fixture
def loopback(shared_data: Path) -> Iterator[tuple[Replay, Hook]]:
    series = read_csv_series(shared_data / "nab" / FILE)
    replay = Replay(series.times.tolist(), series.values.tolist())
    with serving(replay) as hook:
        yield replay, hook


def _config(path: Path, replay: Replay, hook: Hook) -> Path:
    path.write_text(f"""
server: {{data_dir: '{path.parent / "data"}', evaluation_interval: 5m}}
scrape: {{targets: [{{job: nab, url: '{replay.url}', interval: 150s}}]}}
rules:
  default_pack: false
  rules:
    - {{name: NabJump, dimension: service, tier: P1, threshold: dynamic, for: 5m,
       signal: {{type: metric, metric: nab_value}}}}
alerting:
  route: {{receiver: hook, group_by: [alertname], group_wait: 0s}}
  receivers: [{{name: hook, type: webhook, url: '{hook.url}'}}]
  default_actions: false
""")
    return path


class Serve:
    """A running `inferwatch serve` on compressed time; ``url`` once it announced its port."""

    def __init__(self, cfg: Path, start: float, replay: Replay, speed: float = SPEED) -> None:
        replay.announced.clear()
        env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen",
             "127.0.0.1:0", "--speed", str(speed), "--start", str(start)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        self.lines: queue.Queue[str] = queue.Queue()
        self.err: list[str] = []
        threading.Thread(target=self._drain, daemon=True).start()  # the pipe never fills
        try:
            self.url = self._announced()
            replay.follow(self.url, speed)
        except BaseException:
            self.stop()  # never leave a server behind
            raise

    def _announced(self) -> str:
        """The server's lines until it announces its port; the API's URL."""
        while True:
            line = self.lines.get(timeout=60)
            assert line, "".join(self.err)  # "": it exited
            self.err.append(line)
            if m := re.search(r"listening on (http://127\.0\.0\.1:\d+) ", line):
                return m.group(1)

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put("")

    def state(self) -> str:
        """What the server knows, for a failure message: the rule, its alerts, the notifications."""
        out = []
        for path in ("/api/v1/rules", "/api/v1/alerts", "/api/v1/notifications", "/api/v1/targets"):
            try:
                out.append(f"{path}: {httpx.get(self.url + path, timeout=5).text[:3000]}")
            except httpx.HTTPError as e:
                out.append(f"{path}: {e!r}")
        return "\n".join(out)

    def rule(self) -> dict[str, Any]:
        (rule,) = httpx.get(f"{self.url}/api/v1/rules", timeout=5).json()["data"]["groups"][0]["rules"]
        return dict(rule)

    def stop(self) -> str:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        while line := self.lines.get(timeout=10):  # "" once the drain saw the end
            self.err.append(line)
        assert self.proc.stderr is not None
        self.proc.stderr.close()
        return "".join(self.err)


def _learned(rule: dict[str, Any]) -> list[bool]:
    return [b["learned"] for b in rule["bands"]]


def test_serve_learns_a_band_keeps_it_over_a_restart_and_fires_on_the_jump(
        tmp_path: Path, shared_data: Path, loopback: tuple[Replay, Hook]) -> None:
    # rule: `threshold: dynamic` in the real server: no alert while learning or on the clean
    # day after (no fallback: only a band can fire), the band survives a restart (learned at
    # once, though 2 days of new history are needed to learn afresh), the jump fires
    replay, hook = loopback
    cfg = _config(tmp_path / "inferwatch.yml", replay, hook)
    early, paused = replay.event(FIRST + 200), replay.event(RESTART)

    first = Serve(cfg, replay.times[FIRST], replay)
    try:
        assert early.wait(60)
        rule = first.rule()
        assert rule["dynamic"] is True and _learned(rule) in ([], [False])  # < 1 day seen
        assert paused.wait(120), f"the replay stalled at row {replay.row}"
        assert _learned(first.rule()) == [True]
        warm = first.rule()["bands"][0]["warmup"]  # the warm-up, shown beside the state
        assert warm["points"] >= warm["min_points"] and warm["history_s"] >= warm["min_history_s"]
        stopped_at = server_time(first.url)
    finally:
        err = first.stop()
    assert "Traceback" not in err and "warning: scrape target" not in err, err

    listed = subprocess.run([sys.executable, "-m", "inferwatch", "rules", "list", "--config", str(cfg)],
                            capture_output=True, text=True, check=True,
                            env={k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")})
    assert re.search(r"NabJump .* dynamic ", listed.stdout), listed.stdout
    assert re.search(r"band \{.*job=\"nab\".*\}: learned", listed.stdout), listed.stdout

    replay.stop_at = LAST + 1
    second = Serve(cfg, stopped_at, replay, SPEED_AFTER)  # its clock goes on from the first one's
    try:
        assert _learned(second.rule()) == [True]  # restored, not relearned
        assert hook.fired.wait(120), f"no alert by row {replay.row}\n{second.state()}"
    finally:
        err = second.stop()
    assert "Traceback" not in err, err
    rows = [row for row, names in hook.firing if "NabJump" in names]
    assert rows and JUMP < rows[0] <= LAST, hook.firing  # nothing before the jump
