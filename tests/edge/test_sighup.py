"""SIGHUP makes a running agent read its token file again: a rotated token works without a restart."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from .helpers import TOKEN, clean_env, serve, stop

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP")]


def _lines(proc: subprocess.Popen[str]) -> queue.Queue[str]:
    out: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stderr is not None
        try:
            for line in proc.stderr:
                out.put(line)
        except (ValueError, OSError):  # the test closed the pipe (it stopped the agent): nothing more
            pass

    threading.Thread(target=read, daemon=True).start()
    return out


def _until(lines: queue.Queue[str], prefix: str, seen: list[str], timeout: float = 60.0) -> str:
    while True:  # bounded: each get waits at most `timeout` for the agent's next line
        line = lines.get(timeout=timeout)
        seen.append(line)
        if line.startswith(prefix):
            return line


def test_sighup_reloads_the_token_file(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("not-the-token\n")
    cfg = tmp_path / "edge.yml"
    with serve(tmp_path) as (url, _):
        cfg.write_text(f"device: cam-1\nspool: {{path: spool.sqlite}}\n"
                       f"upload: {{url: '{url}', token_file: token, interval: 1s, backoff_base: 0.2, "
                       f"backoff_cap: 0.5}}\nsources: [{{type: host, interval: 1s}}]\n")
        argv = [sys.executable, "-m", "inferwatch", "edge", "--config", str(cfg), "--events"]
        proc = subprocess.Popen(argv, stderr=subprocess.PIPE, text=True, env=clean_env())
        seen: list[str] = []
        try:
            lines = _lines(proc)
            _until(lines, "inferwatch edge: device cam-1", seen)
            refused = _until(lines, "inferwatch edge: retry", seen)
            assert "HTTP 401" in refused  # the wrong token: retried, nothing dropped
            token_file.write_text(TOKEN + "\n")
            os.kill(proc.pid, signal.SIGHUP)
            _until(lines, "inferwatch edge: SIGHUP: token reloaded", seen)
            _until(lines, "inferwatch edge: ok ", seen)
            devices = httpx.get(f"{url}/api/v1/edge/devices", timeout=5).json()["data"]
        finally:
            seen.append(stop(proc))
    assert [(d["device"], d["batches"] >= 1) for d in devices] == [("cam-1", True)]
    assert TOKEN not in "".join(seen) and "not-the-token" not in "".join(seen)
