"""One server per data directory: a second `inferwatch serve` on it refuses, naming the holder's pid;
after the holder dies by ``kill -9`` the directory is taken over."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from inferwatch.server._dirlock import DataDirLock, DataDirLocked
from server._proc import serve

pytestmark = pytest.mark.slow


def _config(tmp_path: Path) -> str:
    return f"server: {{data_dir: '{tmp_path / 'data'}'}}\nrules: {{default_pack: false}}\n"


def _second(tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("INFERWATCH_CONFIG", "INFERWATCH_DATA_DIR")}
    argv = ["serve", "--config", str(tmp_path / "inferwatch.yml"), "--listen", "127.0.0.1:0"]
    return subprocess.run([sys.executable, "-m", "inferwatch", *argv], capture_output=True, text=True,
                          timeout=60, env=env, check=False)


def test_a_second_serve_on_the_same_data_directory_refuses_and_names_the_holder(tmp_path: Path) -> None:
    # before: both ran, and every escalation step was paged twice
    with serve(_config(tmp_path), tmp_path) as first:
        second = _second(tmp_path)
        assert second.returncode != 0
        assert f"in use by another inferwatch server (pid {first.proc.pid})" in second.stderr
        assert "Traceback" not in second.stderr and "listening on" not in second.stderr
        first.proc.send_signal(signal.SIGKILL)  # the kernel drops the lock with the process
        first.proc.wait(timeout=60)
    with serve(_config(tmp_path), tmp_path) as again:  # the stale lock file is taken over
        assert again.url.startswith("http://127.0.0.1:")


def test_the_lock_is_exclusive_within_a_process_too(tmp_path: Path) -> None:
    with DataDirLock.acquire(tmp_path), pytest.raises(DataDirLocked, match=f"pid {os.getpid()}"):
        DataDirLock.acquire(tmp_path)
    DataDirLock.acquire(tmp_path).release()  # released: free again
