"""The evaluator against cases from Prometheus 2.42's promql/testdata (values computed by hand there)."""

from __future__ import annotations

import math

import pytest
from tests.rules._helpers import load

from inferwatch.promql import Engine, EvalError, Matrix, PromQLError

M = 60.0
SERIES = {
    'http_requests{job="api", instance="0", group="production"}': "0+10x10",
    'http_requests{job="api", instance="1", group="production"}': "0+20x10",
    'http_requests{job="app", instance="0", group="canary"}': "0+30x10",
    'http_requests{job="app", instance="1", group="canary"}': "0+40x10",
    'vector_matching_a{l="x"}': "0+1x100",
    'vector_matching_a{l="y"}': "0+2x50",
    'vector_matching_b{l="x"}': "0+4x25",
    'label_src{src="source-value-10", dst="original"}': "0x10",
}


def q(expr: str, t: float = 50 * M) -> dict[str, float]:
    out = Engine(load(SERIES, 5 * M)).instant(expr, t).value
    assert isinstance(out, list)
    return {str(ls): v for ls, v in out}


@pytest.mark.parametrize(("expr", "want"), [
    # aggregation with by/without; topk keeps the series' own labels
    ("sum by (group) (http_requests)", {'{group="production"}': 300, '{group="canary"}': 700}),
    ("count without (instance, job) (http_requests)", {'{group="production"}': 2, '{group="canary"}': 2}),
    ("topk(1, http_requests)", {'http_requests{group="canary",instance="1",job="app"}': 400}),
    ("bottomk by (group) (1, http_requests)", {
        'http_requests{group="production",instance="0",job="api"}': 100,
        'http_requests{group="canary",instance="0",job="app"}': 300}),
    ("quantile(0.5, http_requests)", {"{}": 250}),
    ("stddev(http_requests)", {"{}": 111.80339887498948}),
    ('count_values("v", http_requests)', {'{v="100"}': 1, '{v="200"}': 1, '{v="300"}': 1, '{v="400"}': 1}),
    # many-to-one matching with group_left copies the "one" side's labels
    ('http_requests{job="api"} / on(instance) group_left(group) http_requests{job="app"}', {
        '{group="canary",instance="0",job="api"}': 100 / 300,
        '{group="canary",instance="1",job="api"}': 0.5}),
    # set operators
    ('http_requests{group="canary"} and on(instance) http_requests{instance="0"}', {
        'http_requests{group="canary",instance="0",job="app"}': 300}),
    ('http_requests{instance="0"} unless on(job) http_requests{job="app"}', {
        'http_requests{group="production",instance="0",job="api"}': 100}),
    # offset and @ pick earlier samples; a negative offset looks forward
    ('http_requests{job="api", instance="0"} offset 10m', {
        'http_requests{group="production",instance="0",job="api"}': 80}),
    ('http_requests{job="api", instance="0"} @ 600', {
        'http_requests{group="production",instance="0",job="api"}': 20}),
    ('http_requests{job="api", instance="0"} offset -5m @ 600', {
        'http_requests{group="production",instance="0",job="api"}': 30}),
    # a subquery steps on multiples of its step: 40m, 45m, 50m (window closed on both sides)
    ("sum_over_time(vector_matching_b[10m:5m])", {'{l="x"}': 32 + 36 + 40}),
    ('label_replace(label_src, "dst", "destination-value-$1", "src", "source-value-(.*)")', {
        'label_src{dst="destination-value-10",src="source-value-10"}': 0}),
    ('label_join(label_src, "dst", "-", "src", "src")', {
        'label_src{dst="source-value-10-source-value-10",src="source-value-10"}': 0}),
    ('absent(nonexistent{job="a", x=~"y"})', {'{job="a"}': 1}),
    ("changes(vector_matching_b[50m])", {'{l="x"}': 10}),
    ("predict_linear(vector_matching_a[50m], 3600)", {'{l="x"}': 10 + 12, '{l="y"}': 20 + 24}),
    ("holt_winters(vector_matching_a[50m], 0.5, 0.5)", {'{l="x"}': 10, '{l="y"}': 20}),
    ("clamp(vector_matching_a, 12, 15)", {'{l="x"}': 12, '{l="y"}': 15}),
    ("timestamp(vector_matching_a @ 610)", {'{l="x"}': 600, '{l="y"}': 600}),
    ("-vector_matching_a ^ 2", {'{l="x"}': -100, '{l="y"}': -400}),
])
def test_instant_results(expr: str, want: dict[str, float]) -> None:
    assert q(expr) == pytest.approx(want, rel=1e-12)


def test_scalars_and_strings() -> None:
    engine = Engine(load(SERIES, 5 * M))
    assert engine.instant("1 + 2 * 3 ^ 2", 0).value == 19
    assert engine.instant("time()", 42).value == 42
    assert engine.instant('"text"', 0).value == "text"
    assert math.isnan(engine.instant("scalar(http_requests)", 50 * M).value)  # type: ignore[arg-type]
    assert engine.instant("-1 ^ 2", 0).value == -1
    m = engine.instant("vector_matching_b[10m]", 50 * M).value
    assert isinstance(m, Matrix) and len(m.series[0][1]) == 3


@pytest.mark.parametrize(("expr", "msg"), [
    ("http_requests + ignoring(job, instance) http_requests", "found duplicate series for the match group"),
    ('http_requests / on(group) http_requests{job="api"}', "found duplicate series"),
    ('label_replace(http_requests, "instance", "", "", "")',
     "vector cannot contain metrics with the same labelset"),
    ("holt_winters(vector_matching_a[50m], 1.5, 0.5)", "invalid smoothing factor"),
])
def test_execution_errors(expr: str, msg: str) -> None:
    with pytest.raises(EvalError, match=msg):
        q(expr)


def test_range_query_steps_and_scalars() -> None:
    engine = Engine(load(SERIES, 5 * M))
    res = engine.range("sum(vector_matching_b) * 2", 0, 20 * M, 5 * M)
    ((labels, points),) = res.series
    assert not labels and points == [(0, 0), (300, 8), (600, 16), (900, 24), (1200, 32)]
    with pytest.raises(PromQLError):
        engine.range("sum(", 0, 1, 1)
    with pytest.raises(EvalError, match="range query"):
        engine.range("vector_matching_b[5m]", 0, 60, 10)


def test_sample_limit() -> None:
    engine = Engine(load(SERIES, 5 * M), max_samples=5)
    with pytest.raises(EvalError, match="too many samples"):
        engine.instant("http_requests[50m]", 50 * M)


def test_range_query_staleness_lookback_and_at_modifiers() -> None:
    # a staleness marker ends the series at once; without one it stays visible for 5 minutes
    store = load({'g{a="stale"}': "1 2 stale", 'g{a="gone"}': "1 2"}, M)
    res = Engine(store).range("g", 0, 10 * M, M)
    got = {str(ls): [t for t, _ in pts] for ls, pts in res.series}
    assert got['g{a="stale"}'] == [0, 60]
    assert got['g{a="gone"}'] == [0, 60, 120, 180, 240, 300, 360]
    # @ start() / @ end() pin every step to the range's ends
    res = Engine(load(SERIES, 5 * M)).range("vector_matching_b @ end() - vector_matching_b @ start()",
                                            10 * M, 20 * M, 5 * M)
    ((_, pts),) = res.series
    assert [v for _, v in pts] == [8.0, 8.0, 8.0]
