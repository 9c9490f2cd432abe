"""Range queries evaluated over all steps at once answer exactly what one instant query per step answers.

Differential: the same query through ``Engine.range`` (the vectorised path,
with its step-by-step fallback) and ``Engine(stepwise=True).range`` (the
reference), over randomized series with counter resets, staleness markers,
gaps, NaN/Inf/-0 values and irregular scrapes; results must be identical to
the bit (NaN equals NaN; the sign of zero counts), errors identical in text.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest
from tests.promql import compliance

from inferwatch.model import STALE_NAN, Labels, Sample
from inferwatch.promql import Engine, EvalError, PromQLError, QueryTimeout, parse_promql
from inferwatch.promql._engine import Evaluator
from inferwatch.promql._range_eval import RangeEvaluator
from inferwatch.store import MemoryStore

T0 = 1_000_000.0


def random_store(seed: int) -> MemoryStore:
    """Counters with resets, gauges with odd values, histograms with holes, staleness and gaps."""
    rng = np.random.default_rng(seed)
    samples: list[Sample] = []

    def put(labels: Labels, values: list[float]) -> None:
        t = T0 - 400
        for v in values:
            t += float(rng.choice([5, 10, 15, 15, 15, 30, 60])) + float(rng.integers(0, 3)) / 1000
            if rng.random() < 0.05:
                continue  # a missed scrape
            samples.append(Sample(labels, t, v))

    n = 120
    for job in ("api", "batch"):
        for inst in ("0", "1", "2"):
            c = np.cumsum(rng.exponential(3.0, n))
            c[rng.random(n) < 0.03] = 0.0  # a restart (the counter drops, then keeps climbing from there)
            vals = c.tolist()
            for k in rng.integers(0, n, 2).tolist():
                vals[k] = STALE_NAN  # the target went away for a scrape
            put(Labels.of("c_total", job=job, inst=inst), vals)
            odd = [math.nan, math.inf, -math.inf, -0.0, 0.0, STALE_NAN]
            g = [float(rng.choice(odd)) if rng.random() < 0.08 else float(np.round(rng.normal(0, 5), 1))
                 for _ in range(n)]
            put(Labels.of("g", job=job, inst=inst), g)
            put(Labels.of("dup_a", job=job, inst=inst), np.cumsum(rng.random(n)).tolist())
            put(Labels.of("dup_b", job=job, inst=inst), np.cumsum(rng.random(n)).tolist())
            base = np.cumsum(rng.poisson(2.0, n)).astype(float)
            for k, le in enumerate(("0.1", "0.5", "1", "1.0", "+Inf")):
                if inst == "2" and le == "0.5":
                    continue  # a histogram without that bucket
                vals = (base * (k + 1)).tolist()
                if inst == "1" and le == "1":
                    vals[n // 2] = STALE_NAN  # one bucket missing for a while
                put(Labels.of("h_bucket", job=job, inst=inst, le=le), vals)
    store = MemoryStore()
    store.append(sorted(samples, key=lambda s: s.t))
    return store


QUERIES = [
    # instant selectors: lookback, staleness, offset (negative too), @
    "c_total", "g", "g offset 1m", "g offset -30s", "c_total @ 1000300", "g @ start()", "g @ end() offset 1m",
    # window functions
    "rate(c_total[1m])", "rate(c_total[5m])", "increase(c_total[2m])", "delta(g[3m])", "irate(c_total[1m])",
    "idelta(g[2m])", "rate(c_total[5m] offset 2m)", "rate(c_total[1m] @ end())",
    "increase(c_total[90s] @ 1000200)",
    "avg_over_time(g[2m])", "sum_over_time(g[2m])", "min_over_time(g[5m])", "max_over_time(g[5m])",
    "count_over_time(g[1m])", "last_over_time(g[1m])", "present_over_time(c_total[30s])",
    # aggregations
    "sum(rate(c_total[2m]))", "sum by (job) (g)", "avg by (inst) (g)", "avg(g)", "min(g)", "max by (job) (g)",
    "count(g)", "group by (job) (g)", "stddev(g)", "stdvar by (job) (rate(c_total[2m]))",
    "quantile(0.5, g)", "quantile by (job) (0.9, rate(c_total[1m]))", "topk(2, g)", "bottomk by (job) (1, g)",
    "topk(3, rate(c_total[2m]))", "sum(sum by (job, inst) (g))", "count_values(\"v\", g)",
    "sum without (inst) (g)",
    # histograms
    "histogram_quantile(0.9, sum by (le, job) (rate(h_bucket[2m])))", "histogram_quantile(0.5, h_bucket)",
    "histogram_quantile(1.5, h_bucket)", "histogram_quantile(-1, rate(h_bucket[1m]))",
    # binary operators and matching
    "c_total / on(job, inst) g", "g > 0", "g > bool 0", "2 * g - 1", "-g", "g ^ 2", "g % 3", "1 / g",
    "g + on(job) group_left sum by (job) (g)", "sum by (job) (g) - on(job) group_right g",
    "g and on(job, inst) c_total > 50", "g unless g < 0", "g or c_total", "c_total > bool on(job, inst) g",
    "rate(c_total[1m]) > 0.1 * 2", "time() - 1000000", "scalar(sum(g)) * 2", "vector(1) + 1", "1 + 2 * 3",
    # functions
    "abs(g)", "ceil(g)", "floor(g)", "exp(g)", "ln(g)", "sqrt(g)", "sgn(g)", "round(g, 0.5)", "round(g)",
    "clamp(g, -1, 1)", "clamp_max(g, 0)", "clamp_min(g, 0)", "clamp(g, 1, -1)", "sort_desc(g)",
    'label_replace(g, "x", "$1", "job", "(a).*")', 'label_join(g, "x", "-", "job", "inst")', "timestamp(g)",
    "timestamp(sum by (job) (g))", "absent(nope)", 'absent(g{job="nope", inst="0"})',
    "absent_over_time(g[1m])",
    'absent_over_time(nope{job="x"}[1m])', "hour()", "day_of_week(g)", "deriv(g[5m])", "pi()",
    # what falls back must still agree: subqueries, duplicates after dropping the name, errors
    "rate(c_total[5m:30s])", "max_over_time(rate(c_total[1m])[5m:1m])",
    "sum(rate({__name__=~\"dup_.*\"}[1m]))",
    "rate({__name__=~\"dup_.*\"}[1m])", "-{__name__=~\"dup_.*\"}", "g * on() group_left g",
    "g + ignoring(job) g", 'label_replace(g, "inst", "x", "", "")',
]


EMPTY = {"clamp(g, 1, -1)", "absent_over_time(g[1m])"}


def _exact(res: object) -> object:
    def bits(v: float) -> object:
        return "nan" if math.isnan(v) else struct.pack("<d", v)

    assert hasattr(res, "series")
    return [(ls, [(t, bits(v)) for t, v in pts]) for ls, pts in res.series]


def _run(store: MemoryStore, query: str, start: float, end: float, step: float, stepwise: bool) -> object:
    try:
        return ("ok", _exact(Engine(store, stepwise=stepwise).range(query, start, end, step)))
    except (EvalError, PromQLError) as exc:
        return ("error", type(exc).__name__, str(exc))


@pytest.fixture(scope="module")
def stores() -> list[MemoryStore]:
    return [random_store(seed) for seed in (1, 2, 3)]


@pytest.mark.parametrize("query", QUERIES)
def test_range_equals_step_by_step(stores: list[MemoryStore], query: str) -> None:
    # rule: a range query's answer is the instant answers at start, start + step, ... <= end, exactly
    for k, store in enumerate(stores):
        start, step = T0 + [0, 7.5, 31][k], [15.0, 10.0, 60.0][k]
        end = start + [600, 453, 1200][k]
        fast = _run(store, query, start, end, step, stepwise=False)
        assert fast == _run(store, query, start, end, step, stepwise=True), (query, k)
        assert fast[0] == "error" or fast[1] or query in EMPTY  # something was compared


@pytest.mark.parametrize(("start", "end", "step", "max_samples"), [
    (T0, T0, 15.0, 50_000_000),  # one step
    (T0 + 60, T0, 15.0, 50_000_000),  # no step at all
    (T0, T0 + 600, 1.0, 5_000),  # series x steps past the sample limit: step by step, same answer
])
def test_edges_equal_step_by_step(stores: list[MemoryStore], start: float, end: float, step: float,
                                  max_samples: int) -> None:
    for query in ("sum by (job) (rate(c_total[1m]))", "topk(1, g)", "g"):
        got = Engine(stores[0], max_samples=max_samples).range(query, start, end, step)
        want = Engine(stores[0], max_samples=max_samples, stepwise=True).range(query, start, end, step)
        assert _exact(got) == _exact(want)
        assert bool(got.series) == (end >= start)


@pytest.mark.parametrize("query", ["g unless g < 0", "g or c_total", "g and on(job) c_total", "sum(g) * g",
                                   "histogram_quantile(0.5, h_bucket)", "topk(2, rate(c_total[1m]))"])
def test_a_range_without_data_is_empty_both_ways(stores: list[MemoryStore], query: str) -> None:
    # rule: nothing selected at any step is an empty answer, not an error in the vectorised path
    got = Engine(stores[0]).range(query, T0 - 7200, T0 - 3600, 60)
    assert got.series == [] == Engine(stores[0], stepwise=True).range(query, T0 - 7200, T0 - 3600, 60).series


COMMON = [
    "rate(c_total[5m])", "sum by (job) (rate(c_total[1m]))", "topk(2, rate(c_total[2m]))",
    "histogram_quantile(0.9, sum by (le, job) (rate(h_bucket[2m])))", "g > 0", "avg(g) + 1",
    "c_total / on(job, inst) g", "1 - avg by (inst) (rate(c_total[1m]))", "sum(g) / sum(c_total)",
]


@pytest.mark.parametrize("query", COMMON)
def test_common_shapes_take_the_vectorised_path(stores: list[MemoryStore], query: str) -> None:
    # rule: the shapes dashboards and the benchmark use never fall back to step by step
    expr = parse_promql(query)
    ev = Evaluator(stores[0], round(T0 * 1000), round((T0 + 600) * 1000))
    ev.prepare(expr)
    steps = np.arange(round(T0 * 1000), round((T0 + 600) * 1000) + 1, 15_000, dtype=np.int64)
    assert RangeEvaluator(ev, steps, lambda: None).series(expr)  # raises Fallback if it gave up


def test_cancellation_stops_the_vectorised_path(stores: list[MemoryStore]) -> None:
    # rule: a timed-out query stops with QueryTimeout, it does not fall back and start again
    calls = []

    def cancelled() -> bool:
        calls.append(1)
        return len(calls) > 2

    with pytest.raises(QueryTimeout):
        Engine(stores[0], cancelled=cancelled).range("sum(rate(c_total[1m]))", T0, T0 + 600, 15)
    assert len(calls) == 3


@pytest.mark.slow
@pytest.mark.skipif(compliance.query_file() is None, reason="shared data not found")
def test_compliance_queries_range_equals_step_by_step() -> None:
    # rule: every query of the PromQL compliance set, on its demo data, answers the same both ways
    store = compliance.demo_store()
    cases = [c.query for c in compliance.expand_cases()] + list(compliance.EXTRA_QUERIES)
    differ = [q for q in cases
              if _run(store, q, compliance.START, compliance.END, compliance.STEP, stepwise=False)
              != _run(store, q, compliance.START, compliance.END, compliance.STEP, stepwise=True)]
    assert differ == []
