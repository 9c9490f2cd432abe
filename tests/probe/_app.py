"""The ranker app under a real uvicorn on a fixed loopback port: killed and started again at will."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class App:
    """``ranker_app.py`` on a port; ``start(broken=...)`` deploys a model that answers those wrong."""

    def __init__(self, tmp_path: Path) -> None:
        self.port, self.tmp = free_port(), tmp_path
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, broken: str = "") -> None:
        env = {**os.environ, "RANKER_BROKEN": broken,
               "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
        with (self.tmp / "uvicorn.log").open("ab") as log:  # the child keeps its own descriptor
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "uvicorn", "--host", "127.0.0.1", "--port", str(self.port),
                 "--log-level", "warning", "ranker_app:app"], env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while True:  # bounded by time: a loaded runner starts uvicorn in seconds
            try:
                httpx.post(self.url + "/predict", json={"x": 1}, timeout=5).raise_for_status()
                return
            except httpx.HTTPError:
                assert self.proc.poll() is None and time.monotonic() < deadline, \
                    (self.tmp / "uvicorn.log").read_text()
                time.sleep(0.05)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(30)
