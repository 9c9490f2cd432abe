"""The PromQL 2.42 grammar: literals, precedence, modifiers, errors with Prometheus's message and position."""

from __future__ import annotations

import math
import re

import pytest
from tests.promql import compliance

from inferwatch.promql import (
    Aggregate,
    Binary,
    Number,
    PromQLError,
    Selector,
    String,
    Subquery,
    Unary,
    ValueType,
    parse_promql,
    parse_typed,
)


@pytest.mark.parametrize(("text", "value"), [
    # number literals: decimal, exponent, hex, Inf/NaN in any case, signs folded into the literal
    ("42", 42.0), (".123", 0.123), ("1.23e-3", 0.00123), ("0x3d", 61.0), ("+Inf", math.inf),
    ("-inf", -math.inf), ("-1", -1.0),
])
def test_number_literals(text: str, value: float) -> None:
    e = parse_promql(text)
    assert isinstance(e, Number) and e.value == value


def test_nan_and_strings() -> None:
    e = parse_promql("NaN")
    assert isinstance(e, Number) and math.isnan(e.value)
    # Go escapes in double and single quotes; backticks are raw
    assert parse_promql(r'"a\n\"b\x41"') == String('a\n"bA')
    assert parse_promql(r"`a\n`") == String(r"a\n")


@pytest.mark.parametrize(("text", "printed"), [
    # precedence: ^ (right) > unary minus > * / % atan2 > + - > comparisons > and unless > or
    ("1 + 2 * 3", "1 + 2 * 3"),
    ("2 ^ 3 ^ 2", "2 ^ 3 ^ 2"),
    ("a or b and c unless d", "a or b and c unless d"),
    ("-a ^ 2", "-a ^ 2"),
    ("a > bool 1", "a > bool 1"),
    ("sum(x)by(a)", "sum by (a) (x)"),
    ("topk(3, x) without(b)", "topk without (b) (3, x)"),
    ("a / ignoring(b) group_left(c) d", "a / ignoring (b) group_left (c) d"),
    ("x offset -5m", "x offset -5m"),
    ("x @ end()", "x @ end()"),
    ("rate(x[5m] @ 10 offset 1m)", "rate(x[5m] @ 10.000 offset 1m)"),
    ("max_over_time(rate(x[1m])[1h:5m] offset 1m)", "max_over_time(rate(x[1m])[1h:5m] offset 1m)"),
    ("x[1m0s]", "x[1m]"),  # Grafana's $__rate_interval as Go prints durations
    ('{__name__="x", a!~"b"} # a comment', 'x{a!~"b"}'),
])
def test_printing(text: str, printed: str) -> None:
    # rule: str() is valid PromQL that parses back to the same tree
    e = parse_promql(text)
    assert str(e) == printed
    assert parse_promql(str(e)) == parse_promql(printed)


def test_tree_shapes() -> None:
    e = parse_promql("a - b - c")
    assert isinstance(e, Binary) and isinstance(e.lhs, Binary)  # left associative
    e = parse_promql("2 ^ 3 ^ 2")
    assert isinstance(e, Binary) and isinstance(e.rhs, Binary)  # right associative
    e = parse_promql("-x ^ 2")
    assert isinstance(e, Unary) and isinstance(e.expr, Binary)  # ^ binds tighter than unary minus
    e = parse_promql("count_values by (a) ('v', x)")
    assert isinstance(e, Aggregate) and e.param == String("v") and e.grouping == ("a",)
    e = parse_promql("x[5m:]")
    assert isinstance(e, Subquery) and e.step == 0
    assert parse_typed("x[5m]")[1] is ValueType.MATRIX and parse_typed("time() + 1")[1] is ValueType.SCALAR
    sel = parse_promql("x{a='b'}")
    assert isinstance(sel, Selector) and sel.name == "x"


@pytest.mark.parametrize(("text", "msg"), [
    # messages and positions as Prometheus 2.42 gives them
    ("", "1:1: parse error: no expression found in input"),
    ("sum(x", "1:6: parse error: unclosed left parenthesis"),
    ("sum(x) by (a) by (b)", "1:15: parse error: unexpected <by>"),
    ("x)", "1:2: parse error: unexpected right parenthesis ')'"),
    ("1 > 2", "1:3: parse error: comparisons between scalars must use BOOL modifier"),
    ("rate(x[5m], 1)", '1:1: parse error: expected 1 argument(s) in call to "rate", got 2'),
    ("rate(x)", 'expected type range vector in call to function "rate", got instant vector'),
    ("x + on(a) 1", "vector matching only allowed between instant vectors"),
    ("1 and x", 'set operator "and" not allowed in binary scalar expression'),
    ("x and on(a) group_left y", 'no grouping allowed for "and" operation'),
    ("x + bool y", "bool modifier can only be used on comparison operators"),
    ('{a=""}', "vector selector must contain at least one non-empty matcher"),
    ('x{__name__="y"}', 'metric name must not be set twice: "x" or "y"'),
    ("x offset 1m offset 2m", "offset may not be set multiple times"),
    ("(x)[5m]", "ranges only allowed for vector selectors"),
    ("x[5m][5m:]", "subquery is only allowed on instant vector, got range vector instead"),
    ("topk(x)", "wrong number of arguments for aggregate expression provided, expected 2, got 1"),
    ("count_values('~bad', x)", 'invalid label name "~bad"'),
    ("foo(x)", 'unknown function with name "foo"'),
    ("x @ NaN", "timestamp out of bounds for @ modifier"),
    ("1 + $", "1:5: parse error: unexpected character: '$'"),
    ('x{a="b}', "unterminated quoted string"),
    ("x[5mm]", "bad number or duration syntax"),
    ("-x[5m]", "unary expression only allowed on expressions of type scalar or instant vector"),
    ("1\n+ sum(", "2:7: parse error: unclosed left parenthesis"),
])
def test_errors_carry_prometheus_message_and_position(text: str, msg: str) -> None:
    with pytest.raises(PromQLError, match=re.escape(msg)):
        parse_promql(text)


def test_deep_expressions_do_not_overflow_the_stack() -> None:
    # 5,000 `+` terms parse in a loop; 5,000 nested parentheses are refused with a parse error
    e = parse_promql(" + ".join(["x"] * 5000))
    assert isinstance(e, Binary)
    with pytest.raises(PromQLError, match="nested more than"):
        parse_promql("(" * 5000 + "x" + ")" * 5000)


def test_every_compliance_query_parses_or_is_meant_to_fail() -> None:
    if compliance.query_file() is None:
        pytest.skip("shared data not found")
    # the tester's whole set: valid queries print back to text that parses to the same tree
    for case in compliance.expand_cases():
        try:
            e = parse_promql(case.query)
        except PromQLError:
            assert case.should_fail, case.query
            continue
        assert parse_promql(str(e)) == e, case.query
