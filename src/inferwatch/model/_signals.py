"""SIGTERM and SIGINT as one stop: what ``serve``, the edge agent and the exporter install.

``systemctl stop``, ``docker stop`` and Kubernetes send SIGTERM; a terminal sends SIGINT.
Both should run the same orderly shutdown and end with exit 0, where Python's defaults
end the process at once (SIGTERM, exit 143) or raise ``KeyboardInterrupt`` (SIGINT).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["STOP_SIGNALS", "stop_signals", "wait_for_stop"]

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
Handler = Callable[[int, FrameType | None], None]


@contextmanager
def stop_signals(handler: Handler) -> Iterator[None]:
    """SIGTERM and SIGINT call ``handler`` while the block runs; the previous handlers come back after.

    Unlike uvicorn's own capture, the signal is not raised again at the end: a SIGTERM
    re-raised with its default action ends the process (exit 143) before the
    server's shutdown has run. Outside the main thread (signals cannot be set there)
    nothing is installed.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, handler) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def wait_for_stop() -> str:
    """Block until SIGTERM or SIGINT arrives; return its name (``"SIGTERM"``) for the caller's log line."""
    got: list[int] = []
    stop = threading.Event()

    def handler(sig: int, frame: FrameType | None) -> None:
        got.append(sig)
        stop.set()

    with stop_signals(handler):
        while not stop.wait(1.0):  # a timed wait: the handler runs between the waits
            pass
    return signal.Signals(got[0]).name
