"""Every default rule's texts print numbers for people: at most 4 significant digits, whatever the value."""

from __future__ import annotations

import math
import re

import pytest

from inferwatch.rules import Rule, default_rule_specs, edge_rule_specs, expand_template, value_unit
from inferwatch.rules._humanize import humanize, humanize1024, humanize_duration, humanize_percentage

EXTREMES = (1e-9, 0.7513789632390443, 123456789.123, math.nan, math.inf, -0.5, 0.0)
_NUMBER = re.compile(r"\d[\d.]*")


def _significant(number: str) -> int:
    return len(number.replace(".", "").lstrip("0").rstrip("0") or "0")


def _rules() -> list[Rule]:
    return [Rule.from_spec(s) for s in (*default_rule_specs(), *edge_rule_specs())]


@pytest.mark.parametrize("value", EXTREMES)
def test_no_default_text_prints_more_than_four_significant_digits(value: float) -> None:
    for rule in _rules():
        for key, text in rule.annotations.items():
            shown = expand_template(text, {}, value)
            assert "{{" not in shown, (rule.name, key, shown)
            for number in _NUMBER.findall(shown):
                assert _significant(number) <= 4, (rule.name, key, value, shown)


# rule: the texts Prometheus's docs and the issue name, to the character
@pytest.mark.parametrize(("got", "want"), [
    (humanize(1234567), "1.235M"), (humanize(0.0012), "1.2m"), (humanize(0), "0"),
    (humanize(math.nan), "NaN"), (humanize(-math.inf), "-Inf"), (humanize(1e-9), "1n"),
    (humanize1024(1536), "1.5ki"), (humanize1024(1.0), "1"), (humanize1024(2**40), "1Ti"),
    (humanize_percentage(0.0734375), "7.344%"), (humanize_percentage(math.inf), "+Inf%"),
    (humanize_duration(90), "1m 30s"), (humanize_duration(0.25), "250ms"), (humanize_duration(0), "0s"),
    (humanize_duration(86400 * 2 + 3661.7), "2d 1h 1m 1s"), (humanize_duration(-3.5), "-3.5s"),
    (humanize_duration(12.3456), "12.35s"), (humanize_duration(math.nan), "NaN"),
])
def test_humanize_prints_what_prometheus_prints(got: str, want: str) -> None:
    assert got == want


def test_templates_call_the_functions_in_both_spellings() -> None:
    # rule: `$value | f` and `f $value` are the same call in Go templates
    text = "{{ $value | humanizePercentage }} / {{ humanize .Value }}"
    assert expand_template(text, {}, 0.25) == "25% / 250m"


# rule: a value's unit is what the rule's own text formats it as (cards show the value in it)
@pytest.mark.parametrize(("annotations", "unit"), [
    ({"description": "{{ $value | humanizePercentage }} of requests answer 503."}, "ratio"),
    ({"summary": "P99 is {{ humanizeDuration $value }}"}, "s"),
    ({"summary": "x", "description": "{{ $value|humanize1024 }}B free"}, "bytes"),
    ({"summary": "PSI {{ $value | printf \"%.3g\" }}"}, ""), ({"summary": "{{ $value | humanize }}"}, ""),
    ({"summary": "{{ $threshold | humanizePercentage }}"}, ""), ({}, ""),
])
def test_the_unit_of_a_value_is_what_its_text_formats_it_as(annotations: dict[str, str], unit: str) -> None:
    assert value_unit(annotations) == unit


def test_the_default_pack_gives_its_ratios_and_durations_a_unit() -> None:
    units = {r.name: value_unit(r.annotations) for r in _rules()}
    assert units["ServiceUnavailable"] == units["HighErrorRate"] == "ratio"
    assert units["HighP99Latency"] == units["GenerationSlowFirstToken"] == "s"
    assert units["DiskAlmostFull"] == "bytes" and units["FeatureDriftWarning"] == ""
