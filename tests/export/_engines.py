"""Real Prometheus and Alertmanager processes on loopback for the export tests.

Each starts on a free port, is waited for by polling its ``/-/ready`` (bounded),
and is stopped (terminate, then kill) when the ``with`` block ends.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

_pause = threading.Event()  # never set


def free_port() -> int:
    """A port nothing listens on right now (the OS's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def poll(check: Callable[[], Any], *, timeout: float, what: str, every: float = 0.1) -> Any:
    """Call ``check`` until it returns something truthy; fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            got = check()
        except (httpx.HTTPError, OSError) as exc:
            got, last_error = None, exc
        if got:
            return got
        _pause.wait(every)  # between polls of a real process's API; the check decides
    raise AssertionError(f"timed out after {timeout}s waiting for {what} (last error: {last_error})")


@dataclass
class Engine:
    """A started engine: its base URL and its log file."""

    url: str
    log: Path
    proc: subprocess.Popen[bytes]

    def get(self, path: str, **params: Any) -> Any:
        """GET a JSON API path."""
        r = httpx.get(self.url + path, params=params, timeout=5)
        r.raise_for_status()
        return r.json()


@contextmanager
def _process(argv: Sequence[str], url: str, log: Path, ready_timeout: float,
             ready_path: str = "/-/ready") -> Iterator[Engine]:
    with log.open("wb") as out:
        proc = subprocess.Popen(list(argv), stdout=out, stderr=subprocess.STDOUT)
    engine = Engine(url, log, proc)
    try:
        poll(lambda: (proc.poll() is None and httpx.get(url + ready_path, timeout=2).status_code == 200)
             or _died(proc, log), timeout=ready_timeout, what=f"{argv[0]} ready")
        yield engine
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def _died(proc: subprocess.Popen[bytes], log: Path) -> bool:
    if proc.poll() is not None:
        raise AssertionError(f"exited with {proc.returncode}:\n{log.read_text(errors='replace')[-3000:]}")
    return False


@contextmanager
def alertmanager(binary: str, config: Path, workdir: Path, ready_timeout: float = 30,
                 port: int | None = None) -> Iterator[Engine]:
    """``prometheus-alertmanager`` with ``config``, no clustering, data under ``workdir``."""
    port = port or free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [binary, f"--config.file={config}", f"--storage.path={workdir / 'am-data'}",
            f"--web.listen-address=127.0.0.1:{port}", "--cluster.listen-address=",
            f"--web.external-url={url}"]
    with _process(argv, url, workdir / "alertmanager.log", ready_timeout) as engine:
        yield engine


@contextmanager
def prometheus(binary: str, config: Path, workdir: Path, ready_timeout: float = 30) -> Iterator[Engine]:
    """``prometheus`` with ``config``, TSDB under ``workdir``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [binary, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'prom-data'}",
            f"--web.listen-address=127.0.0.1:{port}"]  # resend delay: the default 1m, as inferwatch
    with _process(argv, url, workdir / "prometheus.log", ready_timeout) as engine:
        yield engine


@contextmanager
def inferwatch(argv: Sequence[str], url: str, log: Path, ready_timeout: float = 60,
               ready_path: str = "/-/ready") -> Iterator[Engine]:
    """``python -m inferwatch ARGV``, ready once ``url + ready_path`` answers 200."""
    with _process([sys.executable, "-m", "inferwatch", *argv], url, log, ready_timeout,
                  ready_path) as engine:
        yield engine
