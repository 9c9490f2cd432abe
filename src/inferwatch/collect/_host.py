"""Host metrics under node_exporter's names: CPU time per core and mode, memory, load."""

from __future__ import annotations

import logging
import os
from typing import Any

import psutil

from inferwatch.collect._base import sample
from inferwatch.model import Sample
from inferwatch.model import metrics as m

__all__ = ["HostCollector"]

_log = logging.getLogger(__name__)

# node_exporter's modes on Linux (guest time is inside user and nice there too).
CPU_MODES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
_MEMORY = (
    (m.NODE_MEMORY_MEMTOTAL, "total"),
    (m.NODE_MEMORY_MEMAVAILABLE, "available"),
    (m.NODE_MEMORY_MEMFREE, "free"),
    (m.NODE_MEMORY_BUFFERS, "buffers"),
    (m.NODE_MEMORY_CACHED, "cached"),
)


class HostCollector:
    """CPU seconds per core and mode, memory and load average, as node_exporter names them.

    >>> from inferwatch.model import metrics
    >>> samples = HostCollector().collect(now=1.0)
    >>> any(s.labels.name == metrics.NODE_CPU_SECONDS_TOTAL.name for s in samples)
    True
    """

    name = "host"

    def __init__(self, *, ps: Any = psutil) -> None:
        self._ps = ps  # psutil or an object with the same functions (tests, other platforms)
        self._failed: set[str] = set()

    def collect(self, now: float) -> list[Sample]:
        """CPU, memory and load samples at ``now``; an unreadable part is skipped and logged once."""
        out: list[Sample] = []
        for part, read in (("cpu", self._cpu), ("memory", self._memory), ("load", self._load)):
            try:
                out.extend(read(now))
            except Exception:
                if part not in self._failed:
                    self._failed.add(part)
                    _log.warning("host collector: cannot read %s; leaving it out", part, exc_info=True)
        return out

    def _cpu(self, now: float) -> list[Sample]:
        out = []
        for cpu, times in enumerate(self._ps.cpu_times(percpu=True)):
            for mode in CPU_MODES:
                value = getattr(times, mode, None)
                if value is not None:
                    out.append(sample(m.NODE_CPU_SECONDS_TOTAL, now, value, {"cpu": str(cpu), "mode": mode}))
        return out

    def _memory(self, now: float) -> list[Sample]:
        vm = self._ps.virtual_memory()
        out = [sample(spec, now, getattr(vm, field)) for spec, field in _MEMORY if hasattr(vm, field)]
        swap = self._ps.swap_memory()
        out.append(sample(m.NODE_MEMORY_SWAPTOTAL, now, swap.total))
        out.append(sample(m.NODE_MEMORY_SWAPFREE, now, swap.free))
        return out

    def _load(self, now: float) -> list[Sample]:
        one, five, fifteen = os.getloadavg()
        return [
            sample(m.NODE_LOAD1, now, one), sample(m.NODE_LOAD5, now, five),
            sample(m.NODE_LOAD15, now, fifteen),
        ]
