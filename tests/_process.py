"""Looking at another process from a test: which signals it catches, a bounded poll of its state."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable


def catches(pid: int, sig: signal.Signals = signal.SIGTERM) -> bool:
    """Whether process ``pid`` has a handler for ``sig`` now (Linux: ``SigCgt`` in /proc/PID/status)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(int(x.split()[1], 16) for x in f if x.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(mask & (1 << (sig - 1)))


def poll_until(pred: Callable[[], bool], what: str, within_s: float = 60.0) -> None:
    """Look at a process's state every few milliseconds until ``pred()`` holds (bounded by time)."""
    end = time.monotonic() + within_s
    while not pred():
        if time.monotonic() > end:
            raise AssertionError(f"{what}: not within {within_s:g} s")
        time.sleep(0.005)  # a poll of another process's state, not a synchronisation of threads
