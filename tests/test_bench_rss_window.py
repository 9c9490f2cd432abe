"""Issue 46: the mixed-load benchmark prints and records the Done-when's RSS figure itself (the growth
over a run's last 5 minutes), not a row written by hand."""

from __future__ import annotations

import importlib.util
import sys
from functools import cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).parent.parent


@cache
def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rss_window", ROOT / "benchmarks" / "_rss_window.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
    spec.loader.exec_module(module)
    return module


def test_growth_is_the_last_sample_over_the_one_five_minutes_before() -> None:
    # a 15-minute run sampled every second: 100 MiB rising 1 MiB a minute, a 50 MiB query peak at 700 s
    rss = [(float(t), (100 + t // 60) * 2**20 + (50 * 2**20 if t == 700 else 0)) for t in range(900)]
    w = _module().last_minutes(rss, 5.0)
    assert (w.first, w.last) == (109 * 2**20, 114 * 2**20)  # t = 599 and t = 899
    assert round(w.growth * 100, 1) == 4.6
    assert w.peak == (111 + 50) * 2**20
    assert (w.first_median, w.last_median) == (110 * 2**20, 114 * 2**20)  # seconds 599-658 and 840-899
    assert w.text() == ("+4.6 % (109 -> 114 MiB); first and last minute's medians 110 -> 114 MiB "
                               "(+3.6 %); peak 161 MiB")


def test_a_run_shorter_than_the_window_has_no_figure() -> None:
    assert _module().last_minutes([(0.0, 1), (299.0, 2)], 5.0) is None
    assert _module().last_minutes([], 5.0) is None
