"""The running server: scrape threads, the evaluation loop, retention, reload."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from inferwatch.config import Config
from inferwatch.model import Clock, ClockStepDetector, Priority
from inferwatch.server._components import ServerComponents
from inferwatch.store import SQLiteStore

__all__ = ["EvalStats", "Server"]

log = logging.getLogger(__name__)
RETENTION_EVERY_S = 3600.0


@dataclass
class EvalStats:
    """What the evaluation loop and the config reloads did, for the server's own ``/metrics``."""

    evaluations: int = 0
    failures: int = 0
    duration_sum: float = 0.0
    last_duration: float = 0.0
    last_cpu: float = 0.0
    """CPU seconds of the last round's thread (``last_duration`` less this: waiting for a core or the GIL)."""
    last_t: float | None = None
    missed: int = 0
    """Rounds skipped because the one before ran past their start (Prometheus's iterations_missed)."""
    last_reload_ok: bool = True
    last_reload_success_t: float | None = None


class Server:
    """Holds the current :class:`ServerComponents` and runs them.

    ``tick(now)`` does one evaluation round (tests and replay drive it on a
    simulated clock); ``start()`` runs the scrape threads and an evaluation
    thread every ``server.evaluation_interval``.
    """

    def __init__(self, components: ServerComponents, *, clock: Clock) -> None:
        self.components = components
        self.clock = clock
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_retention = clock.now()
        self._swap = threading.Lock()
        self.priority = Priority()
        """Rule rounds before queries: the API's query workers wait on it (``model.Priority``)."""
        self.ready = threading.Event()
        self.stats = EvalStats(last_reload_success_t=clock.now())  # the first load counts
        self.base_url = components.config.server.external_url.rstrip("/")
        """The server's absolute URL for links in alerts (``serve`` sets the listen address without one)."""
        self.round_hooks: list[Callable[[float], None]] = []
        """Called every round before the rules (``serve`` records the self-alerts' series there)."""
        self.metric_sources: list[Callable[[], Iterable[Any]]] = []
        """More families for ``/metrics`` (prometheus-client ``Metric`` objects: the heartbeats')."""

    @property
    def config(self) -> Config:
        """The config of the current generation."""
        return self.components.config

    def tick(self, now: float) -> None:
        """One evaluation round (and retention when due); never raises."""
        with self._swap:  # a reload waits for the round, so no state is written twice
            comps = self.components
            start, cpu0 = self.clock.monotonic(), time.thread_time()
            try:
                # queries wait at their next check, and a big scrape before its parse's next block and
                # before its append, until the round (its own series' appends included) is done
                with self.priority.first():
                    if comps.health is not None:  # the storage series first: StorageWriteFailing reads them
                        comps.health.record(now)
                    for hook in self.round_hooks:
                        hook(now)
                    comps.evaluator.evaluate(now)
            except Exception:
                self.stats.failures += 1
                log.exception("evaluation at %s failed", now)
            took = self.clock.monotonic() - start
            st = self.stats
            st.evaluations, st.duration_sum, st.last_duration, st.last_t = (
                st.evaluations + 1, st.duration_sum + took, took, now)
            st.last_cpu = time.thread_time() - cpu0
            if now - self._last_retention >= RETENTION_EVERY_S and isinstance(comps.store, SQLiteStore):
                self._last_retention = now
                try:
                    comps.store.apply_retention()
                except Exception:
                    log.exception("retention failed")

    def start(self) -> None:
        """Start scraping and evaluating in background threads."""
        self.components.scrape.yield_to = self.priority.wait_turn  # a big parse waits for a round
        self.components.scrape.start()
        if self.components.probes is not None:
            self.components.probes.start()
        self._thread = threading.Thread(target=self._run, name="evaluate", daemon=True)
        self._thread.start()
        self.ready.set()

    def _run(self) -> None:
        steps = ClockStepDetector(self.clock)
        due = self.clock.monotonic()
        while not self._stop.is_set():
            self.run_once(steps)
            # scheduled on the monotonic clock: a wall-clock step neither stalls nor rushes rounds
            mono, interval = self.clock.monotonic(), self.config.server.evaluation_interval
            due += interval
            if due <= mono:  # rounds missed (a slow round): skip them, keep the pace, count them
                skipped = int((mono - due) // interval) + 1
                self.stats.missed += skipped
                log.warning("rule evaluation is behind: %d round(s) skipped (the last took %.2fs, the "
                            "interval is %gs)", skipped, self.stats.last_duration, interval)
                due += skipped * interval
            self.clock.wait(self._stop, due - mono)

    def run_once(self, steps: ClockStepDetector) -> None:
        """One round of the evaluation loop: notice a wall-clock step (log it, keep `for` honest), tick."""
        step = steps.observe()
        if step:
            log.warning("the wall clock stepped by %+.3fs; evaluation keeps its pace and pending `for` "
                        "timers count only the time that passed", step)
            self.components.evaluator.shift_clock(step)
        self.tick(self.clock.now())

    def reload(self, build: Callable[[], ServerComponents]) -> None:
        """Build a complete new generation, then swap it in and retire the old one.

        ``build`` runs between evaluation rounds, so the new evaluator restores the
        alert state the old one saved last. Unchanged targets carry on (no stale
        markers, warm parser cache); removed targets' series are marked stale.
        When ``build`` raises, the old generation keeps running.
        """
        with self._swap:
            try:
                self.components.evaluator.save_state()  # the new evaluator restores exactly this
                new = build()  # raises before anything is swapped if the config is bad
            except Exception:
                self.stats.last_reload_ok = False
                raise
            old, self.components = self.components, new
            self.stats.last_reload_ok, self.stats.last_reload_success_t = True, self.clock.now()
        old.scrape.stop()
        new.scrape.adopt(old.scrape, self.clock.now())
        old.retire(keep_store=old.store is new.store)
        if self._thread is not None:
            new.scrape.yield_to = self.priority.wait_turn
            new.scrape.start()
            if new.probes is not None:
                new.probes.start()

    def halt(self, timeout: float = 10.0) -> None:
        """Stop scraping, probing and evaluating (the round in progress finishes); the files stay open."""
        self._stop.set()
        self.ready.clear()
        if self._thread is not None:
            self._thread.join(timeout)
        self.components.scrape.stop()
        if self.components.probes is not None:
            self.components.probes.stop()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the threads and close the components."""
        self.halt(timeout)
        self.components.close()
