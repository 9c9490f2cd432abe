"""Issue 59 #1: the exporter stops on SIGTERM (systemd, Docker, Kubernetes) as on SIGINT: exit 0."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys

import httpx
import pytest
from tests._process import catches, poll_until

BOUND_S = 60.0


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_signal_ends_the_exporter_with_exit_0(sig: signal.Signals) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "exporter", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], BOUND_S)
        first = proc.stdout.readline() if ready else ""
        assert "/metrics" in first, first
        url = first.split()[2]
        assert httpx.get(url, timeout=BOUND_S).status_code == 200
    finally:
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 0, err
    assert f"{sig.name}: stopping" in err and "Traceback" not in err, err


def test_a_sigterm_while_the_exporter_starts_is_a_stop_too() -> None:
    # rule: the handler is installed first thing, so a stop before /metrics listens exits 0 too
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFERWATCH_")}
    proc = subprocess.Popen([sys.executable, "-m", "inferwatch", "exporter", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        poll_until(lambda: catches(proc.pid), "the exporter's stop handler")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=BOUND_S)
    assert proc.returncode == 0, err
    assert "SIGTERM: stopping" in err and "Traceback" not in err, err
