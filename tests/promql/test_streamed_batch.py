"""Issue 46: a range query's instant selectors are read a batch of series at a time (the samples of a
heavy dashboard query over 50,000 series are never all held at once, so the server's memory does not
rise with the span read), and the answers stay what the per-series path gives, to the bit.

Differential over a real SQLite store read in batches of 64 series (300 series: five batches, the last
short): ``Engine.range`` on the store against the same store behind a ``select``-only view.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.promql.test_instant_columns import SelectOnly, _series

from inferwatch.model import STALE_NAN, Labels, SimulatedClock, parse_matchers
from inferwatch.promql import Engine
from inferwatch.store import SQLiteStore

T0 = 1_000_000.0
N = 300
QUERIES = [
    "count(g > 0.5)", "avg by (shard) (g)", "topk(3, g)", "g", "timestamp(g)", "g offset 30s",
    "g - g", "rate(g[1m])", "g / on (key) max_over_time(g[1m])", "sum by (zone) (g) / count by (zone) (g)",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    st = SQLiteStore(Path(tmp_path_factory.mktemp("streamed")) / "t.sqlite", clock=SimulatedClock(T0 + 300))
    st.column_chunk = 64
    rng = np.random.default_rng(4646)
    labels = [Labels.of("g", shard=str(i % 7), zone="ab"[i % 2], key=f"k{i:03d}") for i in range(N)]
    odd = [math.nan, math.inf, -0.0, STALE_NAN]
    for k in range(0, 300, 15):
        vals = np.round(rng.random(N), 3)
        hit = rng.random(N) < 0.03
        vals[hit] = rng.choice(odd, int(hit.sum()))
        keep = rng.random(N) > (0.5 if 100 <= k < 200 else 0.03)  # a stretch where half the series pause
        keep[200:264] &= k < 60  # one whole batch of series stops early: no sample in later spans
        st.append_columns([ls for ls, ok in zip(labels, keep, strict=True) if ok],
                          np.full(int(keep.sum()), T0 + k), vals[keep])
    return st


class Reads:
    """The store, recording which column reader each query used (a fake wrapper, no patching)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store, self.used = store, []
        self.select, self.series, self.label_values = store.select, store.series, store.label_values
        self.select_latest_columns = store.select_latest_columns

    def select_columns(self, *a: Any) -> Any:
        self.used.append("whole")
        return self.store.select_columns(*a)

    def select_column_chunks(self, *a: Any) -> Any:
        got = self.store.select_column_chunks(*a)
        return None if got is None else (got[0], self._batches(got[1]))

    def _batches(self, chunks: Iterator[Any]) -> Iterator[Any]:
        for cols in chunks:
            self.used.append(len(cols.lens))
            yield cols


@pytest.mark.parametrize("query", QUERIES)
def test_batches_answer_as_the_per_series_path(store: SQLiteStore, query: str) -> None:
    # rule: reading a batch of series at a time changes no answer and no order; a span before the head
    # is read from the disk as before
    for start, end in ((T0 - 100, T0 + 700), (T0 + 7.5, T0 + 292.5), (T0 + 120, T0 + 300), (T0 - 7200, T0)):
        want = _series(Engine(SelectOnly(store)).range(query, start, end, 15))  # type: ignore[arg-type]
        assert _series(Engine(store).range(query, start, end, 15)) == want, (query, start)


def test_a_heavy_query_holds_one_batch_of_samples_at_a_time(store: SQLiteStore) -> None:
    # rule: the dashboard's heavy shapes read batches (never the whole span); a selector a range function
    # or a second use needs whole is read whole, once
    for query in ("count(g > 0.5)", "avg by (shard) (g)", "sum(g > 0.9)"):  # (topk: ties go step by step)
        reads = Reads(store)
        Engine(reads).range(query, T0 + 15, T0 + 300, 15)  # type: ignore[arg-type]
        assert reads.used == [64, 64, 64, 64, 44], query
    for query in ("rate(g[1m])", "g - g"):
        reads = Reads(store)
        Engine(reads).range(query, T0 + 15, T0 + 300, 15)  # type: ignore[arg-type]
        assert reads.used.count("whole") == 1 and sum(x for x in reads.used if x != "whole") <= N, query


def test_the_batches_are_the_columns_cut_by_series(store: SQLiteStore) -> None:
    # rule: the batches, end to end, are select_columns' series, labels, times and values, in its order;
    # the label list handed first is the selection's kept list (the same object select_columns hands)
    m = tuple(parse_matchers('{__name__="g"}'))
    whole = store.select_columns(m, T0, T0 + 300)
    got = store.select_column_chunks(m, T0, T0 + 300)
    assert whole is not None and got is not None
    kept, chunks = got
    parts = list(chunks)
    assert [len(p.lens) for p in parts] == [64, 64, 64, 64, 44] and kept is whole.labels
    assert [ls for p in parts for ls in p.labels] == whole.labels
    assert np.array_equal(np.concatenate([p.t for p in parts]), whole.t)
    assert np.array_equal(np.concatenate([p.v for p in parts]).view(np.int64), whole.v.view(np.int64))
    assert store.select_column_chunks(m, T0 - 7200, T0 + 300) is None  # before the head: from the disk
