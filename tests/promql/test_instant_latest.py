"""Issue 46: an instant query reads only each series' last sample for its instant selectors, and answers
exactly what reading the whole lookback answers.

Differential: ``Engine.instant`` (the last sample, through the store's ``select_latest``) against the
evaluator loading the full lookback (a span one millisecond wider than the step), on the randomized
series of ``test_range_eval`` (staleness markers, gaps, NaN/Inf/-0, irregular scrapes), at times that
fall on, between and just before samples; and a store without ``select_latest`` (cut from ``select``).
"""

from __future__ import annotations

import math
import struct

import pytest
from tests.promql.test_range_eval import T0, random_store

from inferwatch.model import Labels, Sample
from inferwatch.promql import Engine, parse_promql
from inferwatch.promql._data import instant_only
from inferwatch.promql._engine import Evaluator
from inferwatch.promql._values import Matrix
from inferwatch.store import MemoryStore

QUERIES = [
    "g", "c_total", "g offset 1m", "c_total @ 1000300", "sum by (job) (g)", "avg(g) > 0", "topk(2, g)",
    "g > 0", "timestamp(g)", "absent(nope)", "count_values(\"v\", g)", "c_total / on(job, inst) g",
    "g - g offset 30s", "rate(c_total[5m]) / c_total", "max_over_time(g[5m:30s]) - g",
]
TIMES = [T0 + d for d in (0.0, 37.5, 120.0, 301.002, 600.0, 899.999)]


class SelectOnly:
    """A store with ``select`` but no ``select_latest`` (the loader cuts the last sample itself)."""

    def __init__(self, store: MemoryStore) -> None:
        self.select, self.series, self.label_values = store.select, store.series, store.label_values


def _bits(x: float) -> object:
    return "nan" if math.isnan(x) else struct.pack("<d", x)


def _value(v: object) -> object:
    """The answer to the bit (NaN equals NaN; the sign of zero counts), a vector in any order."""
    if isinstance(v, list):
        return sorted((ls.items_tuple, _bits(x)) for ls, x in v)
    if isinstance(v, Matrix):
        return [(ls, t.tolist(), [_bits(x) for x in vs.tolist()]) for ls, t, vs in v.series]
    assert isinstance(v, float)
    return _bits(v)


@pytest.fixture(scope="module")
def store() -> MemoryStore:
    return random_store(4)


@pytest.mark.parametrize("query", QUERIES)
def test_instant_reads_of_the_last_sample_answer_as_the_full_lookback(store: MemoryStore, query: str) -> None:
    # rule: the last sample in [t - 5m, t] is all an instant selector picks from; reading only it
    # changes no answer (a stale last sample still hides the series; an older one still counts)
    expr = parse_promql(query)
    for t in TIMES:
        ms = round(t * 1000)
        full = Evaluator(store, ms - 1, ms)  # not an instant query: every sample of the span is loaded
        full.prepare(expr)
        want = _value(full.eval(expr, ms))
        assert _value(Engine(store).instant(query, t).value) == want, (query, t)
        assert _value(Engine(SelectOnly(store)).instant(query, t).value) == want, (query, t)  # type: ignore[arg-type]


def test_a_sample_just_after_the_step_sends_the_read_back_to_its_predecessor() -> None:
    # rule: the store's read is 1 ms wider than the span; a sample 0.4 ms after t rounds to t (inside),
    # one 0.9 ms after rounds past it: then the answer is the sample before
    st = MemoryStore()
    up = Labels.of("up", job="a")
    st.append([Sample(up, 100.0, 1.0), Sample(up, 110.0009, 2.0)])
    assert Engine(st).instant("up", 110.0).value == [(up, 1.0)]
    st.append([Sample(Labels.of("up", job="b"), 100.0, 3.0), Sample(Labels.of("up", job="b"), 110.0004, 4.0)])
    assert sorted(Engine(st).instant("up", 110.0).value) == [(up, 1.0), (Labels.of("up", job="b"), 4.0)]


def test_only_instant_selectors_are_read_as_their_last_sample() -> None:
    # rule: a selector also read as a range, or anything under a subquery, is loaded in full
    m = parse_promql("g").matchers  # type: ignore[attr-defined]
    assert instant_only(parse_promql("sum(g) + g offset 1m")) == {m}
    assert instant_only(parse_promql("rate(g[1m]) / g")) == set()
    assert instant_only(parse_promql("max_over_time(g[5m:1m]) - g")) == set()
