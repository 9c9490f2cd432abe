"""Host collector: node_exporter's names, labels and modes."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import psutil
import pytest

from inferwatch.collect import HostCollector
from inferwatch.model import CATALOG
from inferwatch.model import metrics as m

MODES = {"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}


def _by_name(samples):  # type: ignore[no-untyped-def]
    out: dict[str, list] = {}
    for s in samples:
        out.setdefault(s.labels.name, []).append(s)
    return out


def test_cpu_seconds_per_core_and_mode_like_node_exporter() -> None:
    got = _by_name(HostCollector().collect(now=5.0))
    cpu = got[m.NODE_CPU_SECONDS_TOTAL.name]
    cores = {s.labels["cpu"] for s in cpu}
    # rule: one series per core and mode, cpu labels "0".."n-1", exactly node_exporter's modes
    assert cores == {str(i) for i in range(psutil.cpu_count())}
    assert {s.labels["mode"] for s in cpu} == MODES
    assert len(cpu) == len(cores) * len(MODES)
    assert all(s.t == 5.0 and s.v >= 0 for s in cpu)


def test_memory_and_load_are_present_and_consistent() -> None:
    got = _by_name(HostCollector().collect(now=0.0))
    total = got[m.NODE_MEMORY_MEMTOTAL.name][0].v
    available = got[m.NODE_MEMORY_MEMAVAILABLE.name][0].v
    assert 0 < available <= total
    for spec in (m.NODE_LOAD1, m.NODE_LOAD5, m.NODE_LOAD15, m.NODE_MEMORY_SWAPTOTAL):
        assert got[spec.name][0].v >= 0
    # every emitted name is in the catalog (one place lists every metric)
    assert set(got) <= set(CATALOG)


class _BrokenCpu:
    """psutil whose CPU times fail (a platform without /proc/stat)."""

    def cpu_times(self, percpu: bool) -> list[object]:
        raise OSError("no /proc/stat")

    virtual_memory = staticmethod(psutil.virtual_memory)

    def swap_memory(self) -> SimpleNamespace:
        return SimpleNamespace(total=0, free=0)


def test_a_failing_part_is_skipped_and_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    col = HostCollector(ps=_BrokenCpu())
    with caplog.at_level(logging.WARNING, logger="inferwatch.collect"):
        first = _by_name(col.collect(now=0.0))
        col.collect(now=15.0)
    assert m.NODE_CPU_SECONDS_TOTAL.name not in first
    assert m.NODE_MEMORY_MEMTOTAL.name in first  # the rest still collected
    assert sum("cannot read cpu" in r.getMessage() for r in caplog.records) == 1
