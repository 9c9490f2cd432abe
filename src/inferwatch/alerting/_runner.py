"""Runs a pipeline's ``tick`` in a background thread, waking when the next thing is due
or when a send finishes (so its outcome is recorded at once)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from inferwatch.alerting._pipeline import Pipeline

__all__ = ["PipelineRunner"]

log = logging.getLogger("inferwatch.alerting")
MAX_IDLE_S = 1.0  # also picks up alerts sent between wakeups


class PipelineRunner:
    """The server's notification loop: ``start()``, ``stop()``; never raises out of the loop."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the thread."""
        self.pipeline.set_waker(self._wake.set, runner=True)
        self._thread = threading.Thread(target=self._run, name="notify", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        clock = self.pipeline.clock
        while not self._stop.is_set():
            now = clock.now()
            try:
                self.pipeline.tick(now)
            except Exception:
                log.exception("notification tick at %s failed", now)
            nxt = self.pipeline.next_wakeup()
            delay = MAX_IDLE_S if nxt is None else min(MAX_IDLE_S, max(nxt - clock.now(), 0.01))
            clock.wait(self._wake, delay)
            self._wake.clear()

    def stop(self, timeout: float = 10.0, *, drain: float = 0.0,
             monotonic: Callable[[], float] = time.monotonic) -> int:
        """Stop and join the thread; return the sends and actions still running.

        ``drain``: seconds (real time) the sends and actions already running get to
        answer; nothing new starts meanwhile. What answered is recorded (the notification
        log), so a restart does not send it again; what did not stays in the outbox and
        goes again after the restart.
        """
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        end = monotonic() + drain
        while True:
            self._wake.clear()
            try:  # what answered already is logged now, so a restart does not send it again
                self.pipeline.settle(self.pipeline.clock.now())
            except Exception:
                log.exception("recording finished sends at shutdown failed")
                return 0
            running, left = self._running(), end - monotonic()
            if not running or left <= 0:
                return running
            self._wake.wait(min(left, MAX_IDLE_S))  # a send that finishes wakes it

    def _running(self) -> int:
        """Sends and action runs started and not yet recorded (the loop is stopped: no new ones)."""
        p = self.pipeline
        return sum(q.in_flight() for q in p.queues.values()) + p.act.in_flight()
