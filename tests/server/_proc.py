"""A real ``inferwatch serve`` subprocess on loopback: started, announced, stopped, its log kept."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx


def _readline(stream: IO[str], timeout: float) -> str:
    """The next line of a child's text pipe ("" when none came in ``timeout`` or it closed).

    Not ``select`` then ``readline``: a text pipe reads ahead, so a second line that came in the
    same chunk (a replica's "takes over delivery" beside "listening on") sits in its buffer where
    ``select`` cannot see it, and the wait ran out with the line already there. On a timeout the
    reading thread is left behind (the caller fails then anyway).
    """
    got: list[str] = []
    reader = threading.Thread(target=lambda: got.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(max(timeout, 0.0))
    return got[0] if got else ""


@dataclass
class Served:
    """The running server: its base URL, the process, and its stderr once stopped."""

    url: str
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)

    def line(self, timeout: float = 60.0) -> str:
        """The next stderr line ("" when the process said nothing in ``timeout`` or died)."""
        assert self.proc.stderr is not None
        text = _readline(self.proc.stderr, timeout)
        self.lines.append(text)
        return text

    def wait_for(self, needle: str, timeout: float = 60.0) -> str:
        """Read stderr lines until one contains ``needle``; return it ("" if none came)."""
        while True:
            text = self.line(timeout)
            if not text or needle in text:
                return text


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("INFERWATCH_CONFIG", "INFERWATCH_DATA_DIR") and not k.startswith("OTEL_")}


def spawn_serve(cfg: Path, *args: str) -> subprocess.Popen[str]:
    """``inferwatch serve --config cfg`` on an ephemeral port, just started (stderr piped)."""
    return subprocess.Popen(
        [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", "127.0.0.1:0", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env())


def start_serve(cfg: Path, *args: str, timeout: float = 60.0) -> tuple[subprocess.Popen[str], str]:
    """Start ``inferwatch serve --config cfg`` on an ephemeral port; return the process and its URL.

    Its stderr stays piped (read past the "listening on" line); the caller stops the process.
    """
    proc = spawn_serve(cfg, *args)
    assert proc.stderr is not None
    seen: list[str] = []
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        line = _readline(proc.stderr, end - time.monotonic())
        seen.append(line)
        if m := re.search(r"listening on (https?://127\.0\.0\.1:\d+) ", line):
            return proc, m.group(1)
        if not line:
            break
    proc.kill()
    _, err = proc.communicate(timeout=timeout)
    raise AssertionError(f"serve did not start: {''.join(seen) + err}")


@contextmanager
def serve(config_text: str, tmp_path: Path, *args: str) -> Iterator[Served]:
    """Run ``inferwatch serve`` on ``config_text`` (listening on an ephemeral port) until the block ends."""
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(config_text)
    proc = subprocess.Popen(
        [sys.executable, "-m", "inferwatch", "serve", "--config", str(cfg), "--listen", "127.0.0.1:0", *args],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=_env())
    served = Served("", proc)
    try:
        first = served.wait_for("listening on")
        m = re.search(r"listening on (https?://127\.0\.0\.1:\d+) ", first)
        assert m, "".join(served.lines)
        served.url = m.group(1)
        yield served
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        served.lines.extend(err.splitlines(keepends=True))


def wait_scraped(client: httpx.Client, count: int = 1, within_s: float = 60.0,
                 health: str = "up") -> list[dict[str, object]]:
    """Ask ``/api/v1/targets`` until each target's last scrape left it ``health``; return the targets.

    Bounded by time (a count of fast polls is over in a second or two on a loaded runner). "up" by
    default: a first scrape can fail on a loaded runner (one over its timeout), the next one counts.
    """
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        active = client.get("/api/v1/targets").json()["data"]["activeTargets"]
        # Prometheus's shape: a target not scraped yet has Go's zero time and health "unknown"
        if len(active) >= count and all(t["health"] == health for t in active):
            return list(active)
        client.get("/-/healthy")  # one more round trip: the scrape thread runs meanwhile
    raise AssertionError(f"targets not {health} within {within_s:g} s")


def wait_query(client: httpx.Client, query: str, within_s: float = 60.0) -> list[dict[str, object]]:
    """Ask ``/api/v1/query`` until ``query`` has a result; return it (bounded by time).

    A target's health changes with its first scrape, and a first scrape can fail (one that
    took longer than its timeout on a loaded runner): the data, not the health, is the condition.
    """
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        result = client.get("/api/v1/query", params={"query": query}).json()["data"]["result"]
        if result:
            return list(result)
        client.get("/-/healthy")  # a round trip: the scrape thread runs meanwhile
    raise AssertionError(f"{query!r} had no result within {within_s:g} s")
