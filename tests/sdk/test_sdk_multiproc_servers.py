"""Real gunicorn and uvicorn with 4 workers on loopback: any worker's /metrics counts every request.

The app (``mp_app``) is instrumented as a single-process one; only ``INFERWATCH_MULTIPROC_DIR``
is set. Waits are bounded polls (external processes).
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import psutil
import pytest

from inferwatch.sdk import read_sample
from inferwatch.sdk.multiproc._multiproc import DB_NAME, FLUSH_INTERVAL_S
from inferwatch.settings._env import ENV_MULTIPROC_DIR

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
PREDICT = {"route": "/predict", "code": "200", "service": "svc", "model": "m", "version": "v1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server(kind: str, tmp_path: Path, *extra: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    port = free_port()
    env = {**os.environ, ENV_MULTIPROC_DIR: str(tmp_path / "mp"),
           "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
    if kind == "gunicorn":
        cmd = [sys.executable, "-m", "gunicorn", "-w", "4", "-b", f"127.0.0.1:{port}", *extra, "mp_app:wsgi"]
    else:
        cmd = [sys.executable, "-m", "uvicorn", "--workers", "4", "--host", "127.0.0.1", "--port", str(port),
               "--log-level", "warning", *extra, "mp_app:asgi"]
    log = (tmp_path / f"{kind}.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_workers(proc, 4)
        poll(lambda: get(url + "/predict/warmup") is not None, 120, "server never answered")
        yield url, proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        finally:
            proc.kill()
            proc.wait(30)
            log.close()


def get(url: str) -> httpx.Response | None:
    try:  # a new connection per request, so the kernel spreads them over the workers
        return httpx.get(url, headers={"connection": "close"}, timeout=30)
    except httpx.TransportError:
        return None


def poll(ok: object, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not ok():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def workers_of(proc: subprocess.Popen[bytes]) -> set[int]:
    """The worker processes (for uvicorn: the children of its supervisor, not its resource tracker)."""
    out = set()
    for child in psutil.Process(proc.pid).children():
        try:
            if child.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(child.cmdline()):
                out.add(child.pid)
        except psutil.Error:  # exited meanwhile
            pass
    return out


def wait_workers(proc: subprocess.Popen[bytes], n: int, without: int = 0) -> set[int]:
    found: set[int] = set()

    def ready() -> bool:
        nonlocal found
        found = workers_of(proc)
        return len(found) == n and without not in found
    poll(ready, 120, f"never saw {n} workers")
    return found


def scrape(url: str) -> tuple[float | None, str]:
    r = get(url + "/metrics")
    assert r is not None and r.status_code == 200
    return read_sample(r.text, "inferwatch_requests_total", PREDICT), r.headers["x-pid"]


def send(url: str, n: int) -> set[str]:
    pids = set()
    for _ in range(n):
        r = get(url + "/predict")
        assert r is not None and r.status_code == 200
        pids.add(r.text)
    return pids


def send_spread(url: str, n: int, within_s: float = 60.0) -> tuple[set[str], int]:
    """Send ``n`` requests, then more until two workers answered (bounded by time): pids, count sent.

    The kernel may hand a loaded runner's every connection to the same worker for a while.
    """
    pids, sent = send(url, n), n
    end = time.monotonic() + within_s
    while len(pids) < 2 and time.monotonic() < end:
        pids |= send(url, 10)
        sent += 10
    return pids, sent


def registered(tmp_path: Path) -> set[int]:
    db = sqlite3.connect(tmp_path / "mp" / DB_NAME)
    try:
        return {pid for (pid,) in db.execute("SELECT pid FROM workers")}
    finally:
        db.close()


def every_scrape_reports(url: str, n: int) -> set[str]:
    """Wait until a scrape reports n (others publish within the flush interval), then check that
    scrapes answered by at least two workers all report exactly n."""
    poll(lambda: scrape(url)[0] == n, 30 + 10 * FLUSH_INTERVAL_S, f"no scrape reached {n}")
    answered: set[str] = set()
    end = time.monotonic() + 60  # 80 scrapes at least: a loaded runner may hand one worker a long run
    for k in range(1000):
        value, pid = scrape(url)
        assert value == n, f"worker {pid} reported {value}, want {n}"
        answered.add(pid)
        if len(answered) >= 2 or (k >= 80 and time.monotonic() > end):
            break
    assert len(answered) >= 2, "every scrape reached the same worker"
    return answered


def test_gunicorn_4_workers_count_every_request_and_survive_a_sigkill(tmp_path: Path) -> None:
    with server("gunicorn", tmp_path) as (url, proc):
        served_by, n = send_spread(url, 200)
        assert len(served_by) >= 2, "all requests went to one worker"
        every_scrape_reports(url, n)
        victim = min(workers_of(proc))
        os.kill(victim, signal.SIGKILL)
        wait_workers(proc, 4, without=victim)
        for _ in range(20):  # the dead worker's totals are folded in, never lost
            assert scrape(url)[0] == n
        # the killed worker's row is gone; the live workers (its replacement too) have theirs
        poll(lambda: registered(tmp_path) == workers_of(proc), 60, "worker rows never matched the workers")
        send(url, 50)
        every_scrape_reports(url, n + 50)


def test_uvicorn_4_workers_count_every_request(tmp_path: Path) -> None:
    with server("uvicorn", tmp_path) as (url, _proc):
        served_by, n = send_spread(url, 200)
        assert len(served_by) >= 2, "all requests went to one worker"
        every_scrape_reports(url, n)


def test_gunicorn_worker_recycling_keeps_totals_and_bounded_scrapes(tmp_path: Path) -> None:
    # max_requests=1: every request (scrapes too) retires its worker: the exits are graceful, so
    # each worker's last publish folds it into the archive and nothing is lost.
    with server("gunicorn", tmp_path, "--max-requests", "1") as (url, proc):
        first = time.perf_counter()
        scrape(url)
        first = time.perf_counter() - first
        recycles = 50
        for _ in range(recycles):
            before = workers_of(proc)
            assert send(url, 1)
            poll(lambda b=before: len(workers_of(proc)) == 4 and workers_of(proc) != b, 60, "no recycle")
        poll(lambda: scrape(url)[0] == recycles, 60, f"scrapes never reached {recycles}")
        took = []
        for _ in range(5):
            t0 = time.perf_counter()
            assert scrape(url)[0] == recycles
            took.append(time.perf_counter() - t0)
        db = sqlite3.connect(tmp_path / "mp" / DB_NAME)
        try:
            (workers,) = db.execute("SELECT count(*) FROM workers").fetchone()
            (rows,) = db.execute("SELECT count(*) FROM samples").fetchone()
        finally:
            db.close()
    print(f"scrape before {first * 1000:.1f} ms, after {recycles}+ recycles {min(took) * 1000:.1f} ms; "
          f"{workers} worker rows, {rows} sample rows")
    assert workers <= 8  # live ones, plus those that exited since the last look
    # per series: one archive row plus one per live worker (a handful of series per worker)
    assert rows < 9 * 60
    assert min(took) < 5.0  # a pathology guard: the machine is shared; the rows above are the bound
