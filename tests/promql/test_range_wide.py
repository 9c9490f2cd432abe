"""Issue 46: the vectorised shapes for many series (comparison filters, ``count``, ``sum``, ``topk`` over
one wide group) answer exactly what one instant query per step answers.

Differential, as ``test_range_eval``, but wide: hundreds of series in one group (the shape that was
quadratic), random values with NaN, -0.0, ±Inf and staleness markers, scrapes missed at random and
series that start and end inside the range (missing steps).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from tests.promql.test_range_eval import _run

from inferwatch.model import STALE_NAN, Labels, Sample
from inferwatch.promql import parse_promql
from inferwatch.promql._engine import Evaluator
from inferwatch.promql._range_eval import RangeEvaluator
from inferwatch.store import MemoryStore

T0 = 2_000_000.0
QUERIES = [
    "count(w > 0.5)", "count by (shard) (w > 0.5)", "count(w)", "group(w)", "group by (shard) (w < 0.1)",
    "sum(w)", "sum by (shard) (w)", "sum(w > 0.2)", "avg(w)", "avg by (shard) (w)", "max(w)",
    "min by (shard) (w)", "topk(5, w)", "bottomk(3, w)", "topk by (shard) (2, w)", "count(w == 0)",
    "w > 0.9", "w <= bool 0.25", "sum by (shard) (w) > 4", "stddev by (shard) (w)",
    # without a member-by-member fold: which member wins (NaN, the sign of zero), ranks, counts by value
    "max by (shard) (w)", "min(w)", "max without (key) (w)", "quantile(0.9, w)",
    "quantile by (shard) (0.25, w)", "quantile(-1, w)", 'count_values("v", w)',
    'count_values by (shard) ("v", round(w * 4))',
    'count_values without (key) ("shard", round(w))', 'count_values by (shard) ("shard", w > 0.5)',
    'count_values without (shard) ("shard", round(w))', 'count_values("__name__", round(w))',
    'count_values("0bad", w)',
]


def wide_store(seed: int, n: int = 400, *, odd_share: float = 0.04, digits: int | None = 2) -> MemoryStore:
    rng = np.random.default_rng(seed)
    samples: list[Sample] = []
    odd = [math.nan, math.inf, -math.inf, -0.0, 0.0, STALE_NAN]
    for i in range(n):
        labels = Labels.of("w", shard=str(i % 4), key=f"k{i}")
        first, last = sorted(rng.integers(0, 140, 2).tolist())
        if rng.random() < 0.7:
            first, last = 0, 140  # most series cover the whole range
        for k in range(first, last):
            if rng.random() < 0.05:
                continue  # a missed scrape
            v = float(rng.random()) if digits is None else float(np.round(rng.random(), digits))
            if rng.random() < odd_share:
                v = float(rng.choice(odd))
            samples.append(Sample(labels, T0 + 5 * k + float(rng.integers(0, 3)) / 1000, v))
    store = MemoryStore()
    store.append(sorted(samples, key=lambda s: s.t))
    return store


@pytest.fixture(scope="module")
def stores() -> list[MemoryStore]:
    return [wide_store(seed) for seed in (11, 12)]


@pytest.mark.parametrize("query", QUERIES)
def test_wide_range_equals_step_by_step(stores: list[MemoryStore], query: str) -> None:
    # rule: a range query's answer is the instant answers at each step, to the bit, however wide
    for k, store in enumerate(stores):
        start, step = T0 + [0, 12.5][k], [15.0, 10.0][k]
        end = start + [600, 630][k]
        fast = _run(store, query, start, end, step, stepwise=False)
        assert fast == _run(store, query, start, end, step, stepwise=True), (query, k)
        assert (fast[0] == "ok" and fast[1]) or "0bad" in query, query  # something was compared


@pytest.mark.parametrize("query", ["count(w > 0.5)", "sum(w)", "avg by (shard) (w)", "topk(5, w)", "min(w)",
                                   "max by (shard) (w)", "quantile by (shard) (0.9, w)",
                                   'count_values by (shard) ("v", round(w))'])
def test_wide_shapes_take_the_vectorised_path(query: str) -> None:
    # rule: the dashboard's heavy shapes never fall back to step by step (on values without ties
    # or NaN: topk's choice among ties follows Prometheus's heap, step by step)
    expr = parse_promql(query)
    ev = Evaluator(wide_store(13, odd_share=0.0, digits=None), round(T0 * 1000), round((T0 + 600) * 1000))
    ev.prepare(expr)
    steps = np.arange(round(T0 * 1000), round((T0 + 600) * 1000) + 1, 15_000, dtype=np.int64)
    assert RangeEvaluator(ev, steps, lambda: None).series(expr)  # raises Fallback if it gave up


def test_a_wide_instant_selector_picks_what_each_series_picks(stores: list[MemoryStore]) -> None:
    # rule: over many series the instant selector picks with numpy; it must pick, series by series,
    # the latest sample within the lookback unless it is a staleness marker (Loaded.at)
    from inferwatch.promql._ast import Selector

    for store in stores:
        sel = parse_promql("w")
        assert isinstance(sel, Selector)
        ev = Evaluator(store, round(T0 * 1000), round((T0 + 900) * 1000), lookback=60_000)
        ev.prepare(sel)
        series = ev._data[sel.matchers]
        assert len(series) > 256  # the wide path
        for ts in range(round(T0 * 1000) - 30_000, round((T0 + 900) * 1000), 7_500):
            want = [(s.labels, hit[1]) for s in series if (hit := s.at(ts, 60_000)) is not None]
            got = ev.eval(sel, ts)
            assert isinstance(got, list)
            assert [(ls, _bits(v)) for ls, v in got] == [(ls, _bits(v)) for ls, v in want], ts


def _bits(v: float) -> object:
    return "nan" if math.isnan(v) else v.hex()


def dense_store(seed: int, n: int = 400, *, scale: float = 1.0, digits: int = 17) -> MemoryStore:
    """Every series scraped throughout (no gaps, NaN or staleness), unequal groups (``digits``: ties)."""
    rng = np.random.default_rng(seed)
    samples = [Sample(Labels.of("w", shard=str(i % 7), key=f"k{i}"), T0 + 5 * k,
                      float(np.round(rng.normal(), digits)) * scale)
               for k in range(121) for i in range(n)]
    store = MemoryStore()
    store.append(samples)
    return store


@pytest.fixture(scope="module")
def dense() -> dict[str, MemoryStore]:
    return {"1": dense_store(21, 120), "1e308": dense_store(21, 120, scale=1e308),
            "ties": dense_store(22, 120, digits=1)}


@pytest.mark.parametrize("data", ["1", "1e308", "ties"])
@pytest.mark.parametrize("query", ["avg by (shard) (w)", "avg(w)", "avg by (key) (w)", "topk(5, w)",
                                   "bottomk by (shard) (3, w)"])
def test_dense_rows_equal_step_by_step(dense: dict[str, MemoryStore], query: str, data: str) -> None:
    # rule: avg and topk over rows with a value everywhere (a gauge scraped throughout: the mixed-load
    # dashboard's `avg by (shard)`, `topk(5, …)`) take the short paths and still answer Prometheus's
    # incremental mean and choice to the bit; values near the float limit (a mean that would overflow)
    # keep the fold with its infinity checks, ties at the k-th value Prometheus's heap
    fast = _run(dense[data], query, T0 + 300, T0 + 600, 15.0, stepwise=False)
    assert fast[0] == "ok" and fast[1]
    assert fast == _run(dense[data], query, T0 + 300, T0 + 600, 15.0, stepwise=True)


def test_the_dense_mean_is_the_fold_to_the_bit() -> None:
    # rule: _mean_dense is _fold's avg with what dense rows never need left out
    from inferwatch.promql._ast import Aggregate, Selector
    from inferwatch.promql._range_agg import _dense, _fold, _mean_dense, groups_of
    from inferwatch.promql._rows import Rows

    rng = np.random.default_rng(5)
    labels = [Labels.of("w", shard=str(i % 9), key=f"k{i}") for i in range(500)]
    rows = Rows(labels, rng.normal(size=(500, 41)) * 1e3, np.ones((500, 41), dtype=bool))
    e = Aggregate("avg", Selector(()), ("shard",), False)
    gid, glabels = groups_of(e, labels)
    assert _dense(rows)
    want = _fold(e, rows, gid, glabels, None, lambda: None)
    got = _mean_dense(rows, gid, glabels, lambda: None)
    assert got.labels == want.labels and got.ordered == want.ordered
    assert np.array_equal(got.vals.view(np.int64), want.vals.view(np.int64))
    assert np.array_equal(got.mask, want.mask)
    rows.mask[3, 7] = False  # one step without a value: not dense
    assert not _dense(rows)
