"""CPU of the mixed-load benchmark's wide queries in-process, without the machine's load in the figure.

    python benchmarks/bench_wide_query.py [--series 50000] [--repeat 5]

A SQLite store (the server's) holds ``--series`` gauges ``load_gauge{shard,key}`` (100 shards)
scraped every 5 s for 11 minutes. Printed: the CPU seconds (``time.process_time``, median of
``--repeat``) of the alerting rule's instant expression (``avg by (shard) (load_gauge) > 0.8``,
evaluated every rule round) and of the heavy dashboard queries as ``query_range`` over the last
10 minutes at 15 s steps. CPU time, unlike wall time, barely moves with a shared machine's load:
run it against two trees (``PYTHONPATH=OLD/src`` then ``PYTHONPATH=NEW/src``) for a before/after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import _results
from inferwatch.model import Labels, SimulatedClock
from inferwatch.promql import Engine
from inferwatch.store import SQLiteStore

T0 = 1_000_000.0
RULE = "avg by (shard) (load_gauge) > 0.8"
RANGE = ["count(load_gauge > 0.5)", "avg by (shard) (load_gauge)", "topk(5, load_gauge)"]


def row(n: int) -> str:
    """The row's first cell in RESULTS.md (the default ``--series`` names the row that is there)."""
    return (f"The wide queries' CPU in-process, {n:,} series × 132 samples (no machine load in the figure): "
            "the alerting rule `avg by (shard) (load_gauge) > 0.8` (every round); query_range "
            "`count(load_gauge > 0.5)`, `avg by (shard)`, `topk(5, …)` (10 min at 15 s)")


def _cpu(run: Callable[[], object], repeat: int) -> float:
    run()  # warm: caches, the store's first read
    out = []
    for _ in range(repeat):
        t = time.process_time()
        run()
        out.append(time.process_time() - t)
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.series
    with tempfile.TemporaryDirectory(prefix="wide_query_") as d:
        st = SQLiteStore(Path(d) / "t.sqlite", clock=SimulatedClock(T0 + 700))
        labels = [Labels.of("load_gauge", shard=str(i % 100), key=f"k{i}") for i in range(n)]
        rng = np.random.default_rng(1)
        for k in range(132):
            st.append_columns(labels, np.full(n, T0 + 5 * k), rng.random(n))
        end = T0 + 5 * 131
        load = os.getloadavg()[0]
        print(f"{n:,} series, 132 samples each; load average {load:.1f}")
        rule = _cpu(lambda: Engine(st).instant(RULE, end), args.repeat)
        print(f"rule `{RULE}` (instant, every round): {rule:.3f} s CPU")
        ranges = []
        for q in RANGE:
            cpu = _cpu(lambda q=q: Engine(st).range(q, end - 600, end, 15), args.repeat)  # type: ignore[misc]
            ranges.append(cpu)
            print(f"query_range `{q}` (10 min at 15 s): {cpu:.3f} s CPU")
        st.close()
    _results.record("Hostile input, faults and load", row(n),
                    f"{rule:.3f} s; " + ", ".join(f"{c:.3f} s" for c in ranges) + " CPU", "–", None,
                    note=f"median of {args.repeat}; load average {load:.1f}")


if __name__ == "__main__":
    main()
