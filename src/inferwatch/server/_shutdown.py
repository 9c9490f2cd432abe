"""Stopping ``serve`` the way production stops it: SIGTERM and SIGINT alike, within a grace period.

``systemctl stop``, ``docker stop`` and Kubernetes send SIGTERM, then SIGKILL once
their own grace (Kubernetes: 30 s) has passed. Both signals run one shutdown,
bounded by ``server.shutdown_grace`` (25 s by default): the HTTP listener closes
(uvicorn; running queries are cancelled), scraping and evaluation stop, the sends
already running get until the grace to answer (what answered is recorded, so a
restart does not send it again; what did not stays in the outbox and goes after
the restart, the one way a receiver sees a notification twice, and the log says
how many), then every SQLite file is compacted, checkpointed and closed (no
``-wal`` file left). A watchdog ends the process at the grace, naming the step it
was in, so the orchestrator's SIGKILL never has to: what was committed stays, and
the next start replays the rest.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Shutdown", "Step"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Step:
    """One step of a shutdown: ``run(seconds_left)`` returns what it could not finish, or ``None``."""

    name: str
    run: Callable[[float], str | None]


class Shutdown:
    """One shutdown: its grace starts at the first stop signal (or at ``run``); steps run in order.

    >>> lines = []
    >>> sd = Shutdown(5.0, announce=lines.append)
    >>> sd.run([Step("one", lambda left: None), Step("two", lambda left: "3 sends handed back")])
    ['two: 3 sends handed back']
    >>> lines[-1].startswith("stopped in ") and "not finished: two: 3 sends handed back" in lines[-1]
    True
    """

    def __init__(self, grace: float, *, announce: Callable[[str], None] | None = None,
                 monotonic: Callable[[], float] = time.monotonic,
                 force_exit: Callable[[int], None] = os._exit) -> None:
        self.grace = grace
        self._announce = announce or (lambda line: log.warning("%s", line))
        self._monotonic, self._force_exit = monotonic, force_exit
        self._started: float | None = None
        self._step = "closing the HTTP listener"
        self._done = threading.Event()

    def begin(self, why: str) -> None:
        """Start the grace (once: a second signal does not extend it) and the watchdog."""
        if self._started is not None:
            return
        self._started = self._monotonic()
        self._announce(f"{why}: stopping (grace {self.grace:g}s)")
        threading.Thread(target=self._watch, name="shutdown-watchdog", daemon=True).start()

    def on_signal(self, sig: int) -> None:
        """What a stop signal does here (the caller also tells uvicorn to stop)."""
        self.begin(signal.Signals(sig).name)

    def remaining(self) -> float:
        """Seconds left of the grace (all of it before the shutdown began)."""
        if self._started is None:
            return self.grace
        return max(0.0, self.grace - (self._monotonic() - self._started))

    def run(self, steps: Sequence[Step]) -> list[str]:
        """Run ``steps`` in order (each is told the seconds left); return what was not finished."""
        self.begin("shutdown")
        unfinished: list[str] = []
        for step in steps:
            self._step = step.name
            try:
                note = step.run(self.remaining())
            except Exception as exc:  # the next steps still run: each closes its own files
                log.exception("shutdown step %r failed", step.name)
                note = f"failed ({exc.__class__.__name__}: {exc})"
            if note:
                unfinished.append(f"{step.name}: {note}")
        self._done.set()
        took = self.grace - self.remaining()
        tail = f"; not finished: {'; '.join(unfinished)}" if unfinished else ""
        self._announce(f"stopped in {took:.1f}s{tail}")
        return unfinished

    def _watch(self) -> None:
        if self._done.wait(self.grace):
            return
        self._announce(f"the shutdown passed its grace of {self.grace:g}s while {self._step}; exiting now "
                       "(what was committed stays; the next start replays the rest)")
        for stream in (sys.stderr, sys.stdout):
            stream.flush()
        self._force_exit(0)
