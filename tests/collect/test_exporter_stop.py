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
        # issue 56 row 4: the CLI checked the config, then execv'd the lean image (same pid)
        with open(f"/proc/{proc.pid}/cmdline", "rb") as f:
            assert b"inferwatch.collect" in f.read()
        with open(f"/proc/{proc.pid}/maps") as f:
            maps = f.read()
        assert "pydantic_core" not in maps and "_ssl" not in maps
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


def test_a_stop_pending_across_the_execv_is_a_clean_stop() -> None:
    # the CLI blocks SIGTERM before execv; one sent in that window must reach the new image's handler
    code = ("import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM}); "
            "os.kill(os.getpid(), signal.SIGTERM); "
            "os.execv(sys.executable, [sys.executable, '-m', 'inferwatch.collect', '--interval', '15', "
            "'--host', '127.0.0.1', '--port', '0', '--no-gpu'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=BOUND_S)
    assert done.returncode == 0, done.stderr
    assert "SIGTERM: stopping" in done.stderr and "/metrics" in done.stdout, done
