"""Issue 46: an instant selector over many series read as the store's columns, and aggregated without a
per-member fold (a rule over 50,000 series every round), answers exactly what the per-series path does;
so does a range query whose selectors are read as one columnar batch (a dashboard over 50,000 series).

Differential over a real SQLite store: ``Engine.instant`` on the store (columns) against the same store
behind a view with only ``select`` (one ``Series`` per series, the instant fold): the same vector, in the
same order, to the bit (NaN, ±Inf, -0.0, staleness markers, samples older than the lookback, series of
other metrics, groups of uneven size, ``by`` / ``without`` / no grouping).
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import numpy as np
import pytest

from inferwatch.model import STALE_NAN, Labels, SimulatedClock, parse_matchers
from inferwatch.promql import Engine
from inferwatch.store import SQLiteStore

T0 = 1_000_000.0
N = 400  # over the evaluator's wide bound (256): the columns path
QUERIES = [
    "avg by (shard) (g)", "sum by (shard) (g)", "count by (shard) (g)", "group by (shard) (g)",
    "min by (zone) (g)", "max without (key) (g)", "stddev by (shard) (g)", "stdvar by (zone, shard) (g)",
    "sum(g)", "avg((g))", "count(g)", "avg by (shard) (g) > 0.5", "sum by (shard) (g offset 1m)",
    "avg by (shard) (g @ 1000120)", "topk(3, g)", "count(g > 0.5)", "g",
]


class SelectOnly:
    """The store as a view with ``select`` only: the per-series path."""

    def __init__(self, store: SQLiteStore) -> None:
        self.select, self.series, self.label_values = store.select, store.series, store.label_values


def _bits(x: float) -> object:
    return "nan" if math.isnan(x) else struct.pack("<d", x)


def _answer(v: object) -> object:
    """The vector in its order, values to the bit (or a scalar)."""
    if isinstance(v, list):
        return [(ls.items_tuple, _bits(x)) for ls, x in v]
    assert isinstance(v, float)
    return _bits(v)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> SQLiteStore:
    clock = SimulatedClock(T0 + 300)
    st = SQLiteStore(Path(tmp_path_factory.mktemp("cols")) / "t.sqlite", clock=clock)
    rng = np.random.default_rng(46)
    shard = rng.integers(0, 9, N) ** 2 % 11  # uneven groups
    labels = [Labels.of("g", shard=str(s), zone="ab"[i % 2], key=f"k{i}")
              for i, s in enumerate(shard.tolist())]
    odd = [math.nan, math.inf, -math.inf, -0.0, STALE_NAN]
    for k in range(0, 300, 15):
        vals = np.round(rng.normal(0.5, 0.4, N), 3)
        hit = rng.random(N) < 0.04
        vals[hit] = rng.choice(odd, int(hit.sum()))
        keep = rng.random(N) > (0.6 if k >= 120 else 0.02)  # from 2 minutes on many series stop
        kept = [ls for ls, ok in zip(labels, keep, strict=True) if ok]
        st.append_columns(kept, np.full(len(kept), T0 + k), vals[keep])
    st.append_columns([Labels.of("other", key="x")], [T0 + 290.0], [1.0])
    return st


@pytest.mark.parametrize("query", QUERIES)
def test_column_reads_answer_as_the_per_series_path(store: SQLiteStore, query: str) -> None:
    # rule: the columns change no answer and no order (the instant fold adds members in label order)
    for t in (T0 + 130.0, T0 + 285.0, T0 + 290.0, T0 + 600.0, T0 + 10.0):
        want = _answer(Engine(SelectOnly(store)).instant(query, t).value)  # type: ignore[arg-type]
        assert _answer(Engine(store).instant(query, t).value) == want, (query, t)


RANGE_QUERIES = [
    "avg by (shard) (g)", "topk(3, g)", "count(g > 0.5)", "g", "timestamp(g)", "g offset 30s",
    "rate(g[1m])", "max_over_time(g[1m])", "absent_over_time(g[1m])",
    "sum by (zone) (g) / count by (zone) (g)",
    "quantile by (zone) (0.9, g)", "last_over_time(g[2m])",
]


def _series(result: object) -> object:
    return [(ls.items_tuple, [(t, _bits(x)) for t, x in pts]) for ls, pts in result.series]  # type: ignore[attr-defined]


@pytest.mark.parametrize("query", RANGE_QUERIES)
def test_range_reads_as_one_batch_answer_as_the_per_series_path(store: SQLiteStore, query: str) -> None:
    # rule: the batch (the store's arrays, one offset per series) changes no answer; a span that starts
    # before the head is read as before (the store hands no columns for it)
    for start, end in ((T0 - 100, T0 + 700), (T0 + 7.5, T0 + 292.5), (T0 - 7200, T0 + 300)):
        want = _series(Engine(SelectOnly(store)).range(query, start, end, 15))  # type: ignore[arg-type]
        assert _series(Engine(store).range(query, start, end, 15)) == want, (query, start)


def test_the_store_hands_columns_only_when_they_answer(store: SQLiteStore) -> None:
    # rule: a newest sample after the read's end (a scrape appended during the rule round) is replaced by
    # the head's sample before it; the sorted label list is the same object while the same series match
    # (group numbers are kept on it), also after a round's worth of other selectors read in between
    m = tuple(parse_matchers('{__name__="g"}'))
    early = store.select_latest_columns(m, T0 + 100, T0 + 200)
    assert early is not None and float(early.t.max()) == T0 + 195
    by_series = {s.labels: (s.t[-1], s.v[-1]) for s in store.select(m, T0 + 100, T0 + 200)}
    assert [_bits(x) for x in early.v[np.isfinite(early.t)]] == [
        _bits(by_series[ls][1]) for ls, t in zip(early.labels, early.t, strict=True) if math.isfinite(t)]
    a = store.select_latest_columns(m, T0, T0 + 300)
    for k in range(100):  # the default pack reads ~60 selectors a round
        store.select_latest_columns(tuple(parse_matchers(f'{{__name__="g",key="k{k}"}}')), T0, T0 + 300)
    b = store.select_latest_columns(m, T0, T0 + 300)
    assert a is not None and b is not None and a.labels is b.labels and len(a.labels) == N
    assert a.labels == sorted(a.labels, key=lambda ls: ls.items_tuple)
    assert store.select_latest_columns(m, T0 - 7200, T0 + 300) is None  # before the head: not from columns
