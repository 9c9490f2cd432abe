"""Memory and CPU per series of the default dynamic band (issue 35: at most 16 KiB a series).

    python benchmarks/bench_baseline_memory.py [--series 200] [--days 7] [--step 300]

Feeds ``--series`` series a NAB-like week (``--days`` at ``--step`` seconds: a daily
cycle, noise, a spike now and then) through ``SeriesBands`` with the default
config, as ``serve`` does for every series a dynamic rule watches, and prints the
bytes a series holds (tracemalloc: everything allocated and still alive, divided
by the series count), the floats in the baseline's arrays by structure, and the
microseconds a point costs.
"""

from __future__ import annotations

import argparse
import gc
import math
import sys
import time
import tracemalloc
from array import array
from collections import deque

import numpy as np

import _results
from inferwatch.baseline import BaselineSettings, SeasonalBaseline, SeriesBands
from inferwatch.config import DynamicThreshold


def _values(i: int, n: int, step: float) -> np.ndarray:
    rng = np.random.default_rng(i)
    t = np.arange(n) * step
    v = 100.0 + 30.0 * np.sin(2 * math.pi * t / 86400.0) + rng.normal(0, 3.0, n)
    v[rng.integers(0, n, max(1, n // 2000))] += 60.0
    return v


def _count(obj: object, seen: set[int]) -> int:
    """Float elements reachable from ``obj``: arrays at their allocated size, lists, deques."""
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        return int(obj.size) if obj.dtype.kind == "f" else 0
    if isinstance(obj, array):
        return len(obj)
    if isinstance(obj, (list, tuple, deque)):
        return sum(1 if isinstance(x, float) else _count(x, seen) for x in obj)
    if isinstance(obj, dict):
        return sum(_count(x, seen) for x in obj.values())
    names = [n for cls in type(obj).__mro__ for n in getattr(cls, "__slots__", ())]
    names += list(getattr(obj, "__dict__", {}))
    return sum(_count(getattr(obj, n), seen) for n in names
               if n != "config" and hasattr(obj, n))


def _floats(b: SeasonalBaseline) -> dict[str, int]:
    """Float elements held (allocated, not only filled) per structure of one baseline."""
    out = {f"profile {k}": _count(p, set()) for k, p in b._profiles.items()}
    out.update({f"candidate {k}": _count(c, set()) for k, c in b._candidates.items()})
    out["range"] = _count(b._range, set())
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=200)
    ap.add_argument("--days", type=float, default=7.0)
    ap.add_argument("--step", type=float, default=300.0)
    args = ap.parse_args(argv)
    n = int(args.days * 86400 / args.step)
    data = [_values(i, n, args.step).tolist() for i in range(args.series)]
    times = (np.arange(n) * args.step + 1.7e9).tolist()
    bands = SeriesBands(BaselineSettings(), DynamicThreshold())
    keys = [f'latency{{job="api",instance="{i}"}}' for i in range(args.series)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    for j, t in enumerate(times):  # interleaved, as an evaluator sees them
        for k, key in enumerate(keys):
            bands.band(key, t, data[k][j])
    elapsed = time.perf_counter() - start
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    per = held / args.series
    print(f"{args.series} series x {n} points ({args.days:g} days at {args.step:g} s)")
    print(f"bytes per series (tracemalloc): {per:,.0f} ({per / 1024:.1f} KiB; target <= 16 KiB)")
    print(f"us per point (under tracemalloc): {elapsed / (n * args.series) * 1e6:.1f}")
    sample = bands._series[keys[0]]
    assert isinstance(sample, SeasonalBaseline)
    floats = _floats(sample)
    print(f"float64 elements held by one baseline: {sum(floats.values()):,} "
          f"(state_size, filled: {sample.state_size():,})")
    for name, count in floats.items():
        print(f"  {name:20s} {count:8,d}")
    # timing without tracemalloc's overhead
    fresh = SeriesBands(BaselineSettings(), DynamicThreshold())
    few = keys[: max(1, args.series // 10)]
    start = time.perf_counter()
    for j, t in enumerate(times):
        for k, key in enumerate(few):
            fresh.band(key, t, data[k][j])
    elapsed = time.perf_counter() - start
    print(f"us per point: {elapsed / (n * len(few)) * 1e6:.1f} ({len(few)} series)")
    if (args.days, args.step) == (7.0, 300.0):
        _results.record("Dynamic baselines on NAB",
                        "Memory per series of the default band, a week at 5-minute steps",
                        f"{per / 1024:,.0f} KiB",
                        f"the 16 KiB target: {'met' if per <= 16 * 1024 else 'not met'}",
                        f"{per / (16 * 1024):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
