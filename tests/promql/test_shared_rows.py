"""Issue 46: a range query's step picks over series scraped together (one target's: the same times) are
found once on the one row of times the store hands (``SeriesColumns.row``), not per series; the answers
stay what the per-series path gives, to the bit.

Differential over a real SQLite store: two targets of 100 series each, scraped 2.5 s apart every 5 s
with a scrape's millisecond jitter, for 12 minutes (closed chunks and an open part), read in batches of
64 series (so one batch holds both targets and is read the general way).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.promql.test_instant_columns import SelectOnly, _series

from inferwatch.model import STALE_NAN, Labels, SimulatedClock
from inferwatch.promql import Engine
from inferwatch.store import SQLiteStore

T0 = 1_765_000_000.0
QUERIES = [
    "count(g > 0.5)", "avg by (shard) (g)", "topk(3, g)", "g", "timestamp(g)", "g offset 1m",
    "sum by (instance) (g)", "max(g) - min(g)", "count(c)", "c", "rate(c[1m])", "g @ 1765000300",
]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    st = SQLiteStore(Path(tmp_path_factory.mktemp("shared")) / "t.sqlite", clock=SimulatedClock(T0 + 800))
    st.column_chunk = 64
    rng = np.random.default_rng(4656)
    targets = {tg: [Labels.of("g", instance=tg, shard=str(i % 7), key=f"k{i:03d}") for i in range(100)]
               + [Labels.of("c", instance=tg, key=f"k{i:03d}") for i in range(20)] for tg in "ab"}
    total = np.zeros(40)
    for k in range(144):
        for n, (tg, labels) in enumerate(targets.items()):
            t = round(T0 + 5 * k + 2.5 * n + rng.random() * 0.02, 3)
            g = rng.random(100) if tg == "a" else np.round(rng.random(100), 2)  # raw / XOR-planed chunks
            if k == 70:
                g[:5] = STALE_NAN  # a scrape where five series went stale, then came back
            total[20 * n:20 * n + 20] += rng.integers(0, 5, 20)
            st.append_columns(labels, np.full(120, t), np.concatenate([g, total[20 * n:20 * n + 20]]))
    return st


class Rows:
    """The store, recording whether each batch came with one row of times (a fake wrapper, no patching)."""

    def __init__(self, store: SQLiteStore) -> None:
        self.store, self.shared = store, []
        self.select, self.series, self.label_values = store.select, store.series, store.label_values
        self.select_latest_columns, self.select_columns = store.select_latest_columns, store.select_columns

    def select_column_chunks(self, *a: Any) -> Any:
        got = self.store.select_column_chunks(*a)
        return None if got is None else (got[0], self._batches(got[1]))

    def _batches(self, chunks: Iterator[Any]) -> Iterator[Any]:
        for cols in chunks:
            self.shared.append(cols.row is not None)
            yield cols


@pytest.mark.parametrize("query", QUERIES)
def test_picks_on_one_row_answer_as_the_per_series_path(store: SQLiteStore, query: str) -> None:
    # rule: finding every step's sample on the one row of times changes no answer and no order, whether
    # the window starts before the head, inside a closed chunk or in the open part; a stale marker picked
    # is no sample
    spans = ((T0 + 60, T0 + 660), (T0 + 7.5, T0 + 292.5), (T0 + 701, T0 + 730), (T0 - 100, T0 + 900))
    for start, end in spans:
        want = _series(Engine(SelectOnly(store)).range(query, start, end, 15))  # type: ignore[arg-type]
        assert _series(Engine(store).range(query, start, end, 15)) == want, (query, start)


def test_one_targets_batches_come_with_their_row(store: SQLiteStore) -> None:
    # rule: a batch of one target's series comes with its row of times; the batch holding both targets'
    # series does not (read per series); the store's whole-span read carries the row only when shared
    reads = Rows(store)
    Engine(reads).range("count(g > 0.5)", T0 + 60, T0 + 660, 15)  # type: ignore[arg-type]
    assert reads.shared == [True, False, True, True]  # 100 a, then 100 b: 64 | 36 + 28 | 64 | 8...
