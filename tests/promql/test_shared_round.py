"""A rule round's shortcuts give exactly what plain evaluation gives: common subexpressions evaluated
once and shared (:func:`plan_shared`), and ``and``/``unless`` skipping a side that cannot matter."""

from __future__ import annotations

import math

import pytest
from tests.rules._helpers import load

from inferwatch.promql import Engine, parse_promql, plan_shared
from inferwatch.promql._engine import cost

M = 60.0
SERIES = {
    'req_total{service="a", code="200"}': "0+60x40",
    'req_total{service="a", code="503"}': "0+6x40",
    'req_total{service="b", code="200"}': "0+120x20 2400x20",
    # b's traffic stops at minute 20: its 1m rate is 0 from minute 21, the guard below empties there
    'req_total{service="b", code="503"}': "0+0x40",
    'traffic_on{service="a"}': "1x40",
    'traffic_on{service="b"}': "1x20 _x20",
    'dup_one{x="1"}': "1x40",
    'dup_two{x="1"}': "1x40",
}
STORE = load(SERIES, M)


def _plain(expr: str, t: float) -> object:
    return Engine(STORE).instant(expr, t).value


def _key(v: object) -> object:
    if not isinstance(v, list):
        return repr(v)
    return sorted((ls, repr(x)) for ls, x in v)


# Each group is one round: shared subexpressions across the expressions, and inside one of them.
ROUNDS = [
    [  # the same rate under different aggregations, and the same aggregation twice in one expression
        'sum by (service) (rate(req_total[5m]))',
        'sum by (service) (rate(req_total{code="503"}[5m])) / sum by (service) (rate(req_total[5m]))',
        'rate(req_total[5m]) > 0',
        'sum by (service) (rate(req_total[5m])) and on (service) sum by (service) (rate(req_total[5m])) > 1',
    ],
    [  # one subexpression under different offsets and @: never confused with each other
        'rate(req_total[5m])',
        'rate(req_total[5m] offset 10m)',
        'rate(req_total[5m] @ 600)',
        'rate(req_total[5m] @ end())',
        'rate(req_total[5m]) - rate(req_total[5m] offset 10m)',
    ],
    [  # a subquery's steps and the same expression at the round's time
        'max_over_time(sum by (service) (rate(req_total[2m]))[10m:2m])',
        'sum by (service) (rate(req_total[2m]))',
        'last_over_time((sum by (service) (rate(req_total[2m])) >= 0)[10m:2m])',
    ],
    [  # one selector read over several windows: read once over their union (the windows pick the same)
        'rate(req_total[1m])',
        'sum by (service) (rate(req_total[1h]))',
        'req_total and rate(req_total[5m]) > 0',
        'rate(req_total[1m]) > 0',
    ],
    [  # scalars
        'scalar(sum(rate(req_total[5m]))) * 2',
        'scalar(sum(rate(req_total[5m])))',
    ],
]


@pytest.mark.parametrize("exprs", ROUNDS)
@pytest.mark.parametrize("minute", [5, 12, 21, 30])
def test_a_round_with_shared_results_answers_as_plain_evaluation(exprs: list[str], minute: int) -> None:
    # one load cache and one shared store for the round, as the rule evaluator uses them
    parsed = [parse_promql(e) for e in exprs]
    shared = plan_shared(parsed).results()
    engine = Engine(STORE, shared=shared)
    t = minute * M
    for text, expr in zip(exprs, parsed, strict=True):
        assert _key(engine.instant(expr, t).value) == _key(_plain(text, t)), text
    assert shared.hits > 0


def test_a_round_reads_a_selector_once_over_the_union_of_its_windows() -> None:
    plan = plan_shared([parse_promql(e) for e in ROUNDS[3]])
    m = parse_promql("req_total").matchers  # type: ignore[union-attr]
    assert plan.span(m, (540_000, 600_000), 600_000) == (-3_000_000, 600_000)  # the hour, once
    gap = plan_shared([parse_promql(e) for e in ROUNDS[1]])  # `[5m]` and `[5m] offset 10m`: two reads
    assert gap.span(m, (300_000, 600_000), 600_000) == (300_000, 600_000)


def test_offset_and_at_make_different_subexpressions() -> None:
    plan = plan_shared([parse_promql(e) for e in ROUNDS[1]])
    # `rate(req_total[5m])` twice (alone and in the difference), `… offset 10m` twice; `@ 600` and
    # `@ end()` once each
    assert len(plan) == 2


def test_a_shared_vector_is_a_copy_each_time() -> None:
    exprs = [parse_promql("rate(req_total[5m])"), parse_promql("rate(req_total[5m])")]
    shared = plan_shared(exprs).results()
    engine = Engine(STORE, shared=shared)
    first = engine.instant(exprs[0], 10 * M).value
    assert isinstance(first, list)
    first.clear()  # a consumer that changes what it got changes nobody else's
    second = engine.instant(exprs[1], 10 * M).value
    assert shared.hits == 1
    assert _key(second) == _key(_plain("rate(req_total[5m])", 10 * M))
    assert len(second) == 4


def test_the_store_is_bounded() -> None:
    exprs = [parse_promql("rate(req_total[5m])"), parse_promql("rate(req_total[5m])")]
    shared = plan_shared(exprs).results(limit=3)  # four series: not kept
    engine = Engine(STORE, shared=shared)
    for e in exprs:
        assert len(engine.instant(e, 10 * M).value) == 4  # type: ignore[arg-type]
    assert shared.hits == 0 and shared.kept == 0


@pytest.mark.parametrize("expr", [
    # the guard on the right empties for b at minute 21 (its traffic stopped), for both past minute 40
    'sum by (service) (rate(req_total[5m])) and on (service) (sum by (service) (rate(req_total[1m])) > 0)',
    'last_over_time((sum by (service) (rate(req_total[2m])) >= 0)[30m:2m]) '
    'and on (service) sum by (service) (rate(req_total[1m])) == 0',
    'traffic_on and traffic_on > 5',  # the right side always empty
    'traffic_on unless traffic_on > 5',
    'traffic_on > 5 unless traffic_on',  # the left side always empty
    '(traffic_on > 5 and traffic_on) or traffic_on',
    'traffic_on and on (service) traffic_on and on (service) (traffic_on > 5)',  # a chain, cut at the top
    '(traffic_on and traffic_on > 5) and on (service) traffic_on',  # cut in the middle of the chain
])
def test_and_unless_shortcuts_answer_as_evaluating_both_sides(expr: str) -> None:
    # the vectorised range path evaluates both sides at every step: the reference
    start, end = 2 * M, 45 * M
    ref = {ls: dict(pts) for ls, pts in Engine(STORE).range(expr, start, end, M).series}
    assert Engine(STORE, stepwise=True).range(expr, start, end, M).series == \
        Engine(STORE).range(expr, start, end, M).series
    for minute in range(2, 46):
        t = minute * M
        got = Engine(STORE).instant(expr, t).value
        assert isinstance(got, list)
        want = {ls: pts[t] for ls, pts in ref.items() if t in pts}
        assert {ls: v for ls, v in got} == want, (expr, minute)


def test_an_empty_guard_skips_the_side_it_filters() -> None:
    # `dup_one` and `dup_two` without their names are one label set twice: negating them raises. An
    # empty right side of `and` means the left side is never evaluated (the one difference from
    # evaluating both sides: an error of the skipped side is not raised)
    with pytest.raises(Exception, match="same labelset"):
        Engine(STORE).instant("-{__name__=~'dup_.*'}", 10 * M)
    assert Engine(STORE).instant("(-{__name__=~'dup_.*'}) and on () (traffic_on > 5)", 10 * M).value == []
    assert Engine(STORE).instant("(traffic_on > 5) unless on () (-{__name__=~'dup_.*'})", 10 * M).value == []
    with pytest.raises(Exception, match="same labelset"):
        Engine(STORE).instant("(-{__name__=~'dup_.*'}) and on () traffic_on", 10 * M)


def test_the_cheaper_side_of_an_and_goes_first() -> None:
    sub = parse_promql("last_over_time(rate(req_total[2m])[30m:2m])")
    guard = parse_promql("sum(rate(req_total[1m])) == 0")
    assert cost(guard) < cost(sub)
    assert cost(parse_promql("rate(req_total[1h])")) > cost(parse_promql("rate(req_total[5m])"))
    assert not math.isnan(cost(parse_promql("x[5m:]")))
