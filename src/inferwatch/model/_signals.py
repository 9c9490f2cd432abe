"""SIGTERM and SIGINT as one stop: what ``serve``, the edge agent and the exporter install.

``systemctl stop``, ``docker stop`` and Kubernetes send SIGTERM; a terminal sends SIGINT.
Both should run the same orderly shutdown and end with exit 0, where Python's defaults
end the process at once (SIGTERM, exit 143) or raise ``KeyboardInterrupt`` (SIGINT).

A stop can come at any moment, start-up included (Kubernetes stops a pod that is still
starting): the command line installs a :class:`StopRequest` as its first act, which only
records the signal; start-up goes on untouched (nothing is left half-written) and each
long-running verb acts on it where stopping is safe.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["STOP_SIGNALS", "StopRequest", "stop_signals", "wait_for_stop"]

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


class StopRequest:
    """SIGTERM or SIGINT, caught from the first line of a run on and acted on where stopping is safe.

    ``install()`` takes both signals (in the main thread); the handler only records the first
    (``requested``), wakes ``wait`` and calls each ``on_stop`` listener on a thread of its own (a
    shutdown's grace starts at the signal, whatever start-up is doing). A later handler
    (uvicorn's) takes the signals over and gives them back when it is done. ``release()`` gives
    the previous handlers back and hands them a signal caught meanwhile: a verb that does not run
    until stopped behaves as if nothing had been installed.

    >>> req = StopRequest()
    >>> req.handler(signal.SIGTERM, None)
    >>> req.requested == signal.SIGTERM, req.name, req.wait(0)
    (True, 'SIGTERM', True)
    """

    def __init__(self) -> None:
        self.requested: int | None = None
        self._event = threading.Event()
        self._listeners: list[Callable[[int], None]] = []
        self._previous: dict[int, object] = {}

    def install(self) -> StopRequest:
        """Take SIGTERM and SIGINT (nothing outside the main thread); returns itself."""
        if threading.current_thread() is threading.main_thread():
            self._previous = {sig: signal.signal(sig, self.handler) for sig in STOP_SIGNALS}
        return self

    def handler(self, sig: int, frame: FrameType | None) -> None:
        """The signal handler: record, wake, tell the listeners (off the signal's frame)."""
        if self.requested is not None:
            return
        self.requested = sig
        self._event.set()
        for fn in self._listeners:
            threading.Thread(target=fn, args=(sig,), name="stop-listener", daemon=True).start()

    def on_stop(self, fn: Callable[[int], None]) -> None:
        """Call ``fn(signal)`` when the stop comes (at once, here, if it came already)."""
        self._listeners.append(fn)
        if self.requested is not None:
            fn(self.requested)

    @property
    def name(self) -> str:
        """The signal's name (``"SIGTERM"``), ``""`` before one came."""
        return signal.Signals(self.requested).name if self.requested is not None else ""

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the stop comes (at most ``timeout`` seconds); whether it came."""
        end = None if timeout is None else time.monotonic() + timeout
        while True:  # timed waits: the handler runs between them
            left = 1.0 if end is None else min(1.0, end - time.monotonic())
            if left <= 0:
                return self._event.is_set()
            if self._event.wait(left):
                return True

    def release(self, *, deliver: bool = True) -> None:
        """Give the previous handlers back; with ``deliver``, a signal caught meanwhile goes to them now
        (without: it was acted on already)."""
        previous, self._previous = self._previous, {}
        for sig, old in previous.items():
            signal.signal(sig, old)  # type: ignore[arg-type]
        if deliver and previous and self.requested is not None:
            signal.raise_signal(self.requested)


def wait_for_stop(request: StopRequest | None = None) -> str:
    """Block until SIGTERM or SIGINT arrives; return its name (``"SIGTERM"``) for the caller's log line.

    ``request``: the one installed at the start of the run (at once when it caught a stop already).
    """
    if request is not None:
        request.wait()
        return request.name
    req = StopRequest()
    with stop_signals(req.handler):
        req.wait()
    return req.name
