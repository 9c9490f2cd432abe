"""Process collector and GC statistics from gc.callbacks."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from inferwatch.collect import GcStats, ProcessCollector
from inferwatch.model import metrics as m


class _Ticks:
    """A perf counter that advances 0.25 s per reading."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        self.t += 0.25
        return self.t


@pytest.fixture
def stats() -> Iterator[GcStats]:
    s = GcStats(perf_counter=_Ticks()).install()
    yield s
    s.uninstall()


def _value(samples, name: str, **labels: str) -> float:  # type: ignore[no-untyped-def]
    for s in samples:
        if s.labels.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            return float(s.v)
    raise KeyError(name)


def test_full_collections_are_counted_with_their_pause(stats: GcStats) -> None:
    before = stats.collections[2]
    gc.collect()
    gc.collect()
    samples = stats.samples(now=1.0)
    # rule: each gc.collect() is one generation-2 collection; each pause is stop - start (0.25 s here)
    assert _value(samples, m.PYTHON_GC_COLLECTIONS_TOTAL.name, generation="2") == before + 2
    assert _value(samples, m.PYTHON_GC_PAUSE_SECONDS_TOTAL.name, generation="2") >= 0.5


def test_uninstall_removes_the_callback() -> None:
    s = GcStats().install().install()  # idempotent: registered once
    assert gc.callbacks.count(s._callback) == 1
    s.uninstall()
    s.uninstall()
    gc.collect()
    assert s.collections == [0, 0, 0]


def test_process_metrics_of_this_process() -> None:
    samples = ProcessCollector().collect(now=2.0)
    assert _value(samples, m.PROCESS_RSS.name) > 1_000_000
    assert _value(samples, m.PROCESS_CPU_SECONDS_TOTAL.name, mode="user") > 0
    assert _value(samples, m.PROCESS_THREADS.name) >= 1


def test_gc_stats_only_in_process() -> None:
    # rule: GC callbacks see only this interpreter, so another pid with gc_stats is refused
    with pytest.raises(ValueError, match="only in-process"):
        ProcessCollector(os.getppid(), gc_stats=GcStats())


def test_a_vanished_process_yields_nothing_and_no_error() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    col = ProcessCollector(child.pid)
    child.wait(timeout=30)
    assert col.collect(now=0.0) == []
