"""The model-server process: resident memory, CPU seconds, threads, Python GC counts and pauses."""

from __future__ import annotations

import gc
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

from inferwatch.collect._base import sample
from inferwatch.model import Sample
from inferwatch.model import metrics as m

__all__ = ["GcStats", "ProcessCollector"]

_log = logging.getLogger(__name__)


class GcStats:
    """Counts this process's garbage collections and their pause time through ``gc.callbacks``.

    Only the process that runs the model can see its own collections, so the
    SDK (or an in-process collector) installs this; ``inferwatch exporter
    --pid`` watching another process reports RSS and CPU but no GC.

    >>> stats = GcStats().install()
    >>> _ = gc.collect()
    >>> stats.collections[2] >= 1
    True
    >>> stats.uninstall()
    """

    def __init__(self, *, perf_counter: Callable[[], float] = time.perf_counter) -> None:
        self._perf = perf_counter  # a monotonic reading: durations only, never wall time
        self.collections = [0, 0, 0]
        self.pause_seconds = [0.0, 0.0, 0.0]
        self.collected = [0, 0, 0]
        self._started: dict[int, float] = {}  # thread id -> start of its collection
        self._installed = False

    def install(self) -> GcStats:
        """Register the callback (idempotent); returns ``self``."""
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True
        return self

    def uninstall(self) -> None:
        """Remove the callback (idempotent)."""
        if self._installed:
            gc.callbacks.remove(self._callback)
            self._installed = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        # Runs inside the interpreter's collector: keep it tiny and never raise.
        tid = threading.get_ident()
        if phase == "start":
            self._started[tid] = self._perf()
            return
        gen = int(info.get("generation", 0))
        if not 0 <= gen <= 2:
            return
        started = self._started.pop(tid, None)
        self.collections[gen] += 1
        self.collected[gen] += int(info.get("collected", 0))
        if started is not None:
            self.pause_seconds[gen] += max(self._perf() - started, 0.0)

    def samples(self, now: float) -> list[Sample]:
        """The three GC counters per generation."""
        out = []
        for gen in range(3):
            labels = {"generation": str(gen)}
            out.append(sample(m.PYTHON_GC_COLLECTIONS_TOTAL, now, self.collections[gen], labels))
            out.append(sample(m.PYTHON_GC_PAUSE_SECONDS_TOTAL, now, self.pause_seconds[gen], labels))
            out.append(sample(m.PYTHON_GC_COLLECTED_TOTAL, now, self.collected[gen], labels))
        return out


class ProcessCollector:
    """RSS, CPU seconds and threads of a process (default: this one), plus GC stats if given.

    >>> from inferwatch.model import metrics
    >>> names = {s.labels.name for s in ProcessCollector().collect(now=1.0)}
    >>> metrics.PROCESS_RSS.name in names
    True
    """

    name = "process"

    def __init__(self, pid: int | None = None, *, gc_stats: GcStats | None = None) -> None:
        self.pid = os.getpid() if pid is None else pid
        self._proc = psutil.Process(self.pid)
        if gc_stats is not None and self.pid != os.getpid():
            raise ValueError(f"GC statistics exist only in-process, not for pid {self.pid}")
        self._gc = gc_stats
        self._warned = False

    def collect(self, now: float) -> list[Sample]:
        """RSS, CPU and threads now; a vanished process is logged once and yields only GC stats."""
        out = [] if self._gc is None else self._gc.samples(now)
        try:
            with self._proc.oneshot():
                rss = self._proc.memory_info().rss
                cpu = self._proc.cpu_times()
                threads = self._proc.num_threads()
        except psutil.Error:
            if not self._warned:
                self._warned = True
                _log.warning("process collector: cannot read pid %d; leaving it out", self.pid, exc_info=True)
            return out
        out.append(sample(m.PROCESS_RSS, now, rss))
        out.append(sample(m.PROCESS_CPU_SECONDS_TOTAL, now, cpu.user, {"mode": "user"}))
        out.append(sample(m.PROCESS_CPU_SECONDS_TOTAL, now, cpu.system, {"mode": "system"}))
        out.append(sample(m.PROCESS_THREADS, now, threads))
        return out
