"""The PromQL subset's parser and printer, templates, the test-file reader, the rule config."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from inferwatch._exceptions import ConfigError, InputError
from inferwatch.config import parse_config
from inferwatch.promql import Binary
from inferwatch.rules import (
    PromQLError,
    default_rule_pack,
    expand_template,
    format_go_float,
    load_rules,
    parse_promql,
    to_prometheus_rule_yaml,
)
from inferwatch.rules._notation import expand_values
from inferwatch.rules._testfile import parse_test_file


@pytest.mark.parametrize("text", [
    "up == 0",
    '1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[1m])) > 0.8',
    "histogram_quantile(0.99, sum by (service, le) (rate(x_bucket[5m]))) > 0.5",
    "a / (b + c) > 0.8",
    "(a - b) - c",
    "a - (b - c)",
    "sum without (instance) (x) >= bool 2",
    "max by (s) (max_over_time(x[5m])) * 2",
])
def test_printing_round_trips(text: str) -> None:
    # rule: str(parse(x)) parses back to the same tree (and is what Prometheus gets)
    e = parse_promql(text)
    assert parse_promql(str(e)) == e


def test_precedence_is_prometheus() -> None:
    # rule: comparisons bind loosest, then + -, then * /; left associative
    assert str(parse_promql("a + b * c > 1")) == "a + b * c > 1"
    e = parse_promql("a - b - c")
    assert isinstance(e, Binary) and isinstance(e.lhs, Binary) and str(e.lhs) == "a - b"


@pytest.mark.parametrize(("text", "msg"), [
    # Prometheus 2.42's messages and positions (line:col)
    ("rate(x)", '1:6: parse error: expected type range vector in call to function "rate", got instant '
                'vector'),
    ("label_replace(x)", '1:1: parse error: expected 5 argument(s) in call to "label_replace", got 1'),
    ("sum(x", "1:6: parse error: unclosed left parenthesis"),
    ('x{a=~"("}', "invalid regex"),
    ("nope(x)", 'unknown function with name "nope"'),
])
def test_bad_expressions_are_named(text: str, msg: str) -> None:
    with pytest.raises(PromQLError, match=re.escape(msg)):
        parse_promql(text)


@pytest.mark.parametrize(("v", "go"), [
    # Go's %v: shortest digits, exponent below 1e-4 and from 1e+06
    (0.5, "0.5"), (21.0, "21"), (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"),
    (1e-5, "1e-05"), (0.0001, "0.0001"), (-2.5e-7, "-2.5e-07"), (0.9937499999999999, "0.9937499999999999"),
    (float("nan"), "NaN"), (float("-inf"), "-Inf"), (0.0, "0"),
])
def test_value_prints_like_go(v: float, go: str) -> None:
    assert format_go_float(v) == go


def test_templates_expand_labels_and_value() -> None:
    text = "{{ $labels.svc }}:{{$value}} {{ .Labels.missing }}."
    assert expand_template(text, {"svc": "r"}, 2.0) == "r:2 ."


def test_unsupported_template_is_a_config_error() -> None:
    cfg = parse_config("""
rules:
  rules:
    - {name: X, dimension: service, tier: P1, signal: up, threshold: 1,
       annotations: {summary: "{{ humanizeTimestamp $value }}"}}
""")
    with pytest.raises(ConfigError, match="rule X: unsupported template action"):
        load_rules(cfg)


def test_config_rules_merge_with_the_pack() -> None:
    # rule: a same-named rule replaces the default one; disable drops one
    cfg = parse_config("""
rules:
  disable: [ABTestSignificant]
  rules:
    - {name: TargetDown, dimension: service, tier: P1, signal: up, comparison: "==", threshold: 0, for: 3m}
""")
    rules = {r.name: r for r in load_rules(cfg)}
    assert "ABTestSignificant" not in rules and len(rules) == len(default_rule_pack()) - 1
    assert rules["TargetDown"].for_ == 180.0 and rules["TargetDown"].tier.value == "P1"


@pytest.mark.parametrize(("text", "where"), [
    ("rules: {rules: [{name: X, dimension: service, tier: P9, signal: up, threshold: 1}]}", "tier"),
    ("rules: {rules: [{name: X, dimension: service, tier: P1, signal: nope, threshold: 1}]}", "signal"),
    ("rules: {rules: [{name: X, dimension: service, tier: P1, signal: up, threshold: 1, fro: 1m}]}", "fro"),
    ("rules: {rules: [{name: X, dimension: service, tier: P1, signal: up, threshold: 1,"
     " labels: {tier: P0}}]}", "tier"),
])
def test_bad_rule_config_names_the_field(text: str, where: str) -> None:
    with pytest.raises(ConfigError, match=where):
        parse_config(text)


def test_series_notation() -> None:
    # promtool: a+bxN gives N+1 values, _xN gives N missing ones
    assert expand_values("1+2x3") == [1, 3, 5, 7]
    assert expand_values("5-1x2 _x2 7") == [5, 4, 3, None, None, 7]
    assert expand_values("3x2") == [3, 3, 3]
    with pytest.raises(ValueError, match="bad series value"):
        expand_values("1+x3")


def test_test_file_rejects_typos_but_keeps_inferwatch_keys() -> None:
    ok = parse_test_file("tests: []\ninferwatch: {silences: [{matchers: ['a=b']}]}\n")
    assert ok.extensions == {"silences": [{"matchers": ["a=b"]}]}
    with pytest.raises(InputError, match="unknown key 'evalution_interval'"):
        parse_test_file("evalution_interval: 1m\n")
    with pytest.raises(InputError, match=r"tests\[0\].alert_rule_test\[0\]: unknown key 'exp_alert'"):
        parse_test_file("tests: [{interval: 1m, alert_rule_test: [{alertname: X, exp_alert: []}]}]")


@pytest.mark.tools
def test_generated_rule_file_passes_promtool_check(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    promtool = require_tool("promtool")
    f = tmp_path / "rules.yaml"
    f.write_text(to_prometheus_rule_yaml(default_rule_pack()))
    proc = subprocess.run([promtool, "check", "rules", str(f)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # derived from the pack: every rule with a PromQL form (the `change:` outlier rules have none)
    exported = [r for r in default_rule_pack() if r.expr is not None]
    assert 0 < len(default_rule_pack()) - len(exported) <= 3
    assert f"{len(exported)} rules found" in proc.stdout
