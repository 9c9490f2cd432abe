"""Collection on a timer: the latest snapshot of every collector, refreshed each interval."""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from inferwatch.collect._base import Collector, sample
from inferwatch.model import Clock, Sample, SystemClock
from inferwatch.model import metrics as m

__all__ = ["CollectLoop"]

_log = logging.getLogger(__name__)


class CollectLoop:
    """Runs the collectors every ``interval`` seconds and keeps the latest batch.

    Scrapes read :meth:`snapshot`, so a scrape costs only the rendering and
    many scrapers never multiply NVML calls (a PCIe throughput read blocks
    for NVML's 20 ms sample window per GPU and direction). Drive it with
    :meth:`tick` in tests, or :meth:`start` a background thread.

    >>> from inferwatch.collect import HostCollector
    >>> loop = CollectLoop([HostCollector()], interval=15.0)
    >>> loop.tick() > 0
    True
    """

    def __init__(
        self, collectors: Sequence[Collector], *, interval: float, clock: Clock | None = None,
    ) -> None:
        if interval <= 0:
            raise ValueError(f"collect interval must be positive, got {interval}")
        self.collectors = list(collectors)
        self.interval = interval
        self._clock = clock or SystemClock()
        self._snapshot: list[Sample] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def snapshot(self) -> list[Sample]:
        """The samples of the latest collection (empty before the first)."""
        return self._snapshot

    def tick(self) -> int:
        """Collect once from every collector now; returns the number of samples."""
        now = self._clock.now()
        batch: list[Sample] = []
        for col in self.collectors:
            started = self._clock.monotonic()
            try:
                batch.extend(col.collect(now))
            except Exception:
                _log.warning("collector %s failed; keeping the others", col.name, exc_info=True)
            took = self._clock.monotonic() - started
            batch.append(sample(m.COLLECT_DURATION, now, took, {"collector": col.name}))
        self._snapshot = batch  # one reference swap: readers see a whole batch or the previous one
        return len(batch)

    def start(self) -> None:
        """Collect now, then every interval on a daemon thread."""
        if self._thread is not None:
            return
        self.tick()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="inferwatch-collect", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._clock.wait(self._stop, self.interval):
            try:
                self.tick()
            except Exception:  # pragma: no cover - tick already guards each collector
                _log.exception("collection failed")

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the thread and wait for it (bounded by ``timeout``)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
