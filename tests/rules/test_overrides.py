"""Issue 40 #6: ``rules.overrides`` changes a pack rule by name; clear errors for the usual slips."""

from __future__ import annotations

import pytest

from inferwatch._exceptions import ConfigError
from inferwatch.config import parse_config
from inferwatch.rules import load_rules
from inferwatch.rules._template import check_template, expand_template


def _rule(config: str, name: str):  # type: ignore[no-untyped-def]
    (rule,) = [r for r in load_rules(parse_config(config)) if r.name == name]
    return rule


def test_an_override_changes_for_and_threshold_and_the_summary_follows() -> None:
    rule = _rule("rules:\n  overrides:\n    SevereLatency: {for: 10m, threshold: 2}\n", "SevereLatency")
    assert (rule.for_, rule.threshold, rule.tier.value) == (600.0, 2.0, "P1")
    assert rule.promql.endswith("> 2")
    assert rule.annotations["summary"] == "P99 latency of {{ $labels.service }} is over 2s"
    untouched = _rule("", "SevereLatency")
    assert (untouched.for_, untouched.threshold) == (300.0, 1.0)
    assert untouched.annotations["summary"] == "P99 latency of {{ $labels.service }} is over 1s"


def test_labels_and_annotations_are_merged_not_replaced() -> None:
    rule = _rule("rules:\n  overrides:\n    HighP99Latency:\n      tier: P1\n      labels: {team: infer}\n"
                 "      annotations: {runbook_url: 'https://wiki/p99'}\n", "HighP99Latency")
    assert rule.tier.value == "P1" and rule.labels["team"] == "infer"
    assert rule.annotations["runbook_url"] == "https://wiki/p99" and "summary" in rule.annotations


def test_an_override_of_a_pack_rule_not_loaded_is_kept_quietly() -> None:
    # EdgeDeviceOffline is loaded only with edge.devices: the same config works before and after
    config = "rules: {overrides: {EdgeDeviceOffline: {threshold: 3}}}"
    names = [r.name for r in load_rules(parse_config(config))]
    assert "EdgeDeviceOffline" not in names
    rule = _rule("edge: {devices: {cam: tok}}\nrules: {overrides: {EdgeDeviceOffline: {threshold: 3}}}",
                 "EdgeDeviceOffline")
    assert rule.threshold == 3.0 and "for 3 heartbeats" in rule.annotations["summary"]


@pytest.mark.parametrize(("config", "message"), [
    # a misspelt rule: named, with the nearest name
    ("rules: {overrides: {SevereLatancy: {for: 10m}}}",
     "no rule named 'SevereLatancy' (did you mean 'SevereLatency'?"),
    # a misspelt field: named with its path
    ("rules: {overrides: {SevereLatency: {fro: 10m}}}", "rules.overrides.SevereLatency.fro: unknown field"),
    # a value the rule cannot take
    ("rules: {overrides: {SevereLatency: {comparison: '=>'}}}", "rules.overrides.SevereLatency.comparison"),
])
def test_bad_overrides_are_named(config: str, message: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        load_rules(parse_config(config))
    assert message in str(err.value)


def test_a_threshold_inside_the_expression_says_where_it_goes() -> None:
    config = ("rules:\n  rules:\n    - {name: Slow, dimension: service, tier: P1,\n"
              "       signal: {type: expr,\n"
              "                expr: 'histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m]))) > 2.5'}}\n")
    with pytest.raises(ConfigError) as err:
        parse_config(config)
    text = str(err.value)
    assert "rules.rules[0]: the threshold is written inside the expression (> 2.5)" in text
    assert "write expr: 'histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))'" in text
    assert "threshold: 2.5" in text and "Field required" not in text


@pytest.mark.parametrize(("template", "value", "want"), [
    ('{{ $value | printf "%.3g" }}', 2.127776517868042, "2.13"),
    ('{{ printf "%.1f" $value }}', 2.127776517868042, "2.1"),
    ('{{ $value | printf "%.2f" }}', float("inf"), "+Inf"),
    ("{{ $value }}", 2.127776517868042, "2.127776517868042"),
])
def test_values_rounded_as_go_printf_rounds_them(template: str, value: float, want: str) -> None:
    check_template(template)
    assert expand_template(template, {}, value) == want


def test_edge_offline_message_is_rounded() -> None:
    rule = _rule("edge: {devices: {cam: tok}}", "EdgeDeviceOffline")
    assert rule.threshold == 1.5
    text = expand_template(rule.annotations["description"], {}, 2.127776517868042)
    assert text == "Silent for 2.13 heartbeats."
