"""Shared pieces of the edge tests: a scripted source, a real `inferwatch serve` on loopback."""

from __future__ import annotations

import http.server
import json
import os
import queue
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from inferwatch.edge import AgentConfig, SpoolConfig, UploadConfig
from inferwatch.model import Labels, MetricKind, Sample

TOKEN = "edge-t0ken-for-tests"
API_TOKEN = "api-t0ken-for-tests"
AGENT = [sys.executable, "-m", "inferwatch", "edge", "--events", "--config"]
"""The edge agent as a process (append its config file's path)."""
T0_MS = int(time.time()) * 1000
"""Now-ish, in ms: inside the spool's 24 h and the store's retention."""


@contextmanager
def sequence_app() -> Iterator[str]:
    """The device's application at the yielded URL: each scrape is the next number N, stamped T0_MS + N s.

    Its value N * (-1)^N always leaves the 10 % band, so every scrape is spooled.
    """
    n = [0]
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            with lock:
                n[0] += 1
                k = n[0]
            body = f"app_seq {k * (-1) ** k} {T0_MS + k * 1000}\n".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class ScriptedSource:
    """A source whose value at each read is ``fn(now)`` for each of ``names``."""

    fn: Callable[[str, float], float]
    names: tuple[str, ...] = ("temp_celsius",)
    interval: float = 15.0
    name: str = "scripted"
    kinds: dict[str, MetricKind] = field(default_factory=dict)
    reads: int = 0

    def read(self, now: float) -> list[Sample]:
        self.reads += 1
        return [Sample(Labels.of(n), now, self.fn(n, now)) for n in self.names]


def line(proc: subprocess.Popen[str], timeout: float = 60.0) -> str:
    """The process's next stderr line, waiting at most ``timeout`` ("" if it died or said nothing)."""
    assert proc.stderr is not None
    ready, _, _ = select.select([proc.stderr], [], [], timeout)
    return proc.stderr.readline() if ready else ""


class Lines:
    """A process's stderr lines, read on a thread (``select`` misses lines already buffered)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        self._q: queue.Queue[str] = queue.Queue()
        self._stream = proc.stderr
        self.seen: list[str] = []
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            for text in self._stream:
                self._q.put(text)
        finally:
            self._stream.close()
            self._q.put("")

    def close(self, timeout: float = 10.0) -> None:
        """Wait for the stream to end (after the process exited) and close it."""
        self._thread.join(timeout)

    def next(self, timeout: float = 60.0) -> str:
        """The next line ("" when the stream ended or nothing came within ``timeout``)."""
        try:
            got = self._q.get(timeout=timeout)
        except queue.Empty:
            return ""
        self.seen.append(got)
        return got


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}


def stop(proc: subprocess.Popen[str]) -> str:
    """Terminate ``proc`` and return the rest of its stderr."""
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err or ""


@contextmanager
def serve(tmp: Path, *, port: int = 0, data: str = "data",
          more_devices: tuple[str, ...] = ()) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A real `inferwatch serve` with device ``cam-1`` (token :data:`TOKEN`; ``more_devices``: token
    ``<name>-<TOKEN>``); yields its URL."""
    cfg = tmp / "inferwatch.yml"
    others = "".join(f", {d}: {d}-{TOKEN}" for d in more_devices)
    cfg.write_text(f"server: {{data_dir: '{tmp / data}', api_token: {API_TOKEN}, evaluation_interval: 1s}}\n"
                   f"edge: {{devices: {{cam-1: {TOKEN}{others}}}}}\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=clean_env())
    try:
        first = line(proc)
        m = re.search(r"listening on (http://127\.0\.0\.1:\d+) ", first)
        assert m, first
        yield m.group(1), proc
    finally:
        err = stop(proc)
        assert "Traceback" not in err, err


def query(url: str, expr: str, at: float) -> dict[str, float]:
    """An instant query through the real API: ``{device or series: value}``."""
    r = httpx.get(f"{url}/api/v1/query", params={"query": expr, "time": at}, timeout=10)
    assert r.status_code == 200, r.text
    return {str(s["metric"]): float(s["value"][1]) for s in r.json()["data"]["result"]}


def count(url: str, selector: str, at: float, window: str = "30d") -> int:
    """How many samples of ``selector`` the server stored in ``window`` before ``at``."""
    got = query(url, f"sum(count_over_time({selector}[{window}]))", at)
    return int(sum(got.values()))


def read_store(data_dir: Path, selector: str) -> dict[str, list[tuple[float, float]]]:
    """Every stored sample of ``selector`` in the server's SQLite TSDB (read after the server stopped)."""
    from inferwatch.store import TSDB_FILE, SQLiteStore, parse_selector

    store = SQLiteStore(data_dir / TSDB_FILE, retention=1e12)
    try:
        return {str(s.labels): list(zip(s.t.tolist(), s.v.tolist(), strict=True))
                for s in store.select(parse_selector(selector), 0, 4e9)}
    finally:
        store.close()


def agent_file(tmp: Path, upload_url: str, app: str) -> Path:
    """The agent of the kill -9 and SIGTERM stories, as its config file ``tmp/edge.yml``: device
    cam-1, ``spool.sqlite``, batches of 3 every 50 ms to ``upload_url``, ``app`` scraped every 100 ms.

    Format 2: the server stores exactly what was sent (format 3 fills in between sent points,
    which repeats values: these stories count duplicates).
    """
    cfg = tmp / "edge.yml"
    cfg.write_text(json.dumps({
        "device": "cam-1", "spool": {"path": "spool.sqlite"},
        "upload": {"url": upload_url, "interval": "50ms", "batch_size": 3, "backoff_base": "50ms",
                   "format": 2},
        "sources": [{"type": "scrape", "url": app, "interval": "100ms"}],
    }))
    return cfg


def start_agent(cfg: Path) -> tuple[subprocess.Popen[str], Lines]:
    """The agent as a process on ``cfg`` (its token in the environment), its stderr read on a thread."""
    proc = subprocess.Popen([*AGENT, str(cfg)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**clean_env(), "INFERWATCH_EDGE_TOKEN": TOKEN})
    return proc, Lines(proc)


def agent_config(tmp: Path, url: str, **upload: object) -> AgentConfig:
    return AgentConfig("cam-1", spool=SpoolConfig(tmp / "spool.sqlite"),
                       upload=UploadConfig(url=url, token=TOKEN, **upload))  # type: ignore[arg-type]


def served(sent: list[Sample], step: float, *, counters: tuple[str, ...] = (),
           device: str = "cam-1") -> dict[str, list[tuple[float, float]]]:
    """What ``serve`` stores of the samples an agent sent in format 3 (``read_store``'s shape): the
    gaps between sent points filled in at ``step`` (server/ingest/_edge_fill.py; gauges hold, counters'
    lines), by a server that saw them all."""
    from inferwatch.edge import DeadbandSettings
    from inferwatch.server.ingest._edge_fill import Filler

    named = [Sample(s.labels.with_(device=device), s.t, s.v) for s in sent]
    filled = Filler().fill(named, lambda ls: ls.name in counters, step, DeadbandSettings().heartbeat_max)
    out: dict[str, list[tuple[float, float]]] = {}
    for s in sorted(filled, key=lambda s: s.t):
        out.setdefault(str(s.labels), []).append((s.t, s.v))
    return out


def assert_served(got: dict[str, list[tuple[float, float]]], sent: list[Sample], step: float) -> None:
    """``got`` (``read_store``) is :func:`served` of ``sent`` up to each series' last sent point, then
    that point's value held at ``step`` (up to the last instant of the device's last batch)."""
    assert served_ok(got, sent, step), (got, served(sent, step))


def served_ok(got: dict[str, list[tuple[float, float]]], sent: list[Sample], step: float) -> bool:
    """:func:`assert_served` as a yes or no."""
    want = served(sent, step)
    if sorted(got) != sorted(want):
        return False
    for key, points in got.items():
        last = want[key][-1]
        tail = [p for p in points if p[0] > last[0]]
        if ([p for p in points if p[0] <= last[0]] != want[key] or any(v != last[1] for _, v in tail)
                or [t for t, _ in tail] != [last[0] + step * (k + 1) for k in range(len(tail))]):
            return False
    return True
