"""Histogram quantiles as ``edge simulate`` measures them: Prometheus's formula, its inverse, the windows."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch.edge._quantiles import histogram_units, quantile, rank_of, worst_quantile_error
from inferwatch.model import Labels, Sample
from inferwatch.promql._kernels import bucket_quantile

BOUNDS = (0.005, 0.01, 0.025, 0.05, 0.1, math.inf)
counts = st.lists(st.integers(0, 1000), min_size=len(BOUNDS), max_size=len(BOUNDS))


@settings(max_examples=200, deadline=None)
@given(counts, st.sampled_from((0.5, 0.9, 0.99)))
def test_the_quantile_is_prometheus_s(per_bucket: list[int], q: float) -> None:
    cumulative = [(b, float(sum(per_bucket[:i + 1]))) for i, b in enumerate(BOUNDS)]
    want = bucket_quantile(q, cumulative)  # the query engine's, checked against Prometheus elsewhere
    got = quantile(q, cumulative)
    assert (math.isnan(got) and math.isnan(want)) or got == want


@settings(max_examples=200, deadline=None)
@given(counts, st.sampled_from((0.5, 0.9, 0.99)))
def test_the_rank_inverts_the_quantile(per_bucket: list[int], q: float) -> None:
    cumulative = [(b, float(sum(per_bucket[:i + 1]))) for i, b in enumerate(BOUNDS)]
    x = quantile(q, cumulative)
    if math.isnan(x) or per_bucket[-1] or x == 0:  # +Inf's share or an empty first bucket: no inverse
        return
    assert abs(rank_of(x, cumulative) - q) < 1e-9


def _unit(step_counts: list[list[int]]) -> tuple[list[Sample], Labels]:
    base = Labels.of("lat_seconds_bucket", job="app")
    out, acc = [], [0] * len(BOUNDS)
    for k, row in enumerate(step_counts):
        for i, n in enumerate(row):
            acc[i] += n
        for i, b in enumerate(BOUNDS):
            le = "+Inf" if math.isinf(b) else str(b)
            out.append(Sample(base.with_(le=le), 1_796_000_000 + 15 * k, float(sum(acc[:i + 1]))))
    return out, base.without("le")


def test_exact_buckets_have_no_error_and_a_lossy_one_is_measured() -> None:
    samples, key = _unit([[5, 20, 40, 20, 10, 5]] * 40)
    raw: dict[Labels, list[Sample]] = {}
    for s in samples:
        raw.setdefault(s.labels, []).append(s)
    units = histogram_units(list(raw))
    assert list(units) == [key] and [b for b, _ in units[key]] == list(BOUNDS)
    assert worst_quantile_error(units[key], raw, raw, 300.0, 10.0) == (0.0, 0.0)
    # the server's line from the first to the last point of every bucket: exact for a steady rate
    ends = {ls: [xs[0], xs[-1]] for ls, xs in raw.items()}
    assert worst_quantile_error(units[key], raw, ends, 300.0, 10.0) == (0.0, 0.0)
    # a burst of slow requests in the middle, lost by joining the ends: measured, by value and by rank
    steady = [5, 20, 40, 20, 10, 5]
    burst, _ = _unit([steady] * 20 + [[0, 0, 0, 0, 100, 100]] * 4 + [steady] * 16)
    raw_b: dict[Labels, list[Sample]] = {}
    for s in burst:
        raw_b.setdefault(s.labels, []).append(s)
    value, rank = worst_quantile_error(units[key], raw_b, {ls: [xs[0], xs[-1]] for ls, xs in raw_b.items()},
                                       300.0, 10.0)
    assert value > 0.1 and 0.05 < rank < 1.0
