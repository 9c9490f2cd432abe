"""Issue 56 row 2: a warm scrape's batch of the very same label objects finds its series ids in one
identity pass (``store._accept.SeenIds``), and retention that drops series forgets those ids."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from inferwatch.model import Labels, SimulatedClock
from inferwatch.store import SQLiteStore, parse_selector

N = 2048  # wider than SeenIds.WIDE


def _batch(st: SQLiteStore, labels: list[Labels], t: float, v: float) -> None:
    st.append_columns(labels, np.full(len(labels), t), np.full(len(labels), v))


def test_a_repeated_batch_lands_on_the_same_series_and_retention_forgets_it(tmp_path: Path) -> None:
    clock = SimulatedClock(0.0)
    st = SQLiteStore(tmp_path / "db.sqlite", clock=clock, retention=100.0)
    labels = [Labels.of("m", i=str(i)) for i in range(N)]
    for k in range(3):  # new, then known by object, then the same batch again
        _batch(st, labels, 10.0 * k, float(k))
    assert st.series_count() == N and st.stats.appended == 3 * N
    (last,) = st.select(parse_selector(f'm{{i="{N - 1}"}}'), 0, 1e9)
    assert last.v.tolist() == [0.0, 1.0, 2.0]
    # retention drops every series of the batch (none newer than 100 s ago); the same objects come back
    other = [Labels.of("keep", i=str(i)) for i in range(3)]
    clock.set(300.0)
    _batch(st, other, 299.0, 1.0)
    st.apply_retention()
    assert st.series_count() == 3
    _batch(st, labels, 300.0, 7.0)  # must make the series anew, not write to the forgotten ids
    _batch(st, labels, 310.0, 8.0)
    assert st.series_count() == 3 + N
    (back,) = st.select(parse_selector(f'm{{i="{N - 1}"}}'), 0, 1e9)
    assert back.t.tolist() == [300.0, 310.0] and back.v.tolist() == [7.0, 8.0]
    assert [s.v.tolist() for s in st.select(parse_selector("keep"), 0, 1e9)] == [[1.0]] * 3
    st.close()
