"""Relabelling: every action and edge case of Prometheus 2.42's own relabel tests, as cases."""

from __future__ import annotations

from typing import Any

import pytest

from inferwatch.model import RelabelAction, RelabelConfigError, RelabelRule, parse_relabel_configs, relabel

ABC = {"a": "foo", "b": "bar", "c": "baz"}
PORTS = {"__tmp_port": "1234", "__port1": "1234", "__port2": "5678"}
TAGS = "path:/secret,job:some-job,label:foo=bar"

CASES: list[tuple[str, dict[str, str], list[Any], dict[str, str] | None]] = [
    # replace: ${1} references, repeated
    (
        "replace braces",
        ABC,
        [{"source_labels": ["a"], "regex": "f(.*)", "target_label": "d", "replacement": "ch${1}-ch${1}"}],
        {**ABC, "d": "choo-choo"},
    ),
    # replace: two source labels joined by the separator; the second rule sees the first's output
    (
        "replace chained",
        ABC,
        [
            {
                "source_labels": ["a", "b"],
                "regex": "f(.*);(.*)r",
                "target_label": "a",
                "replacement": "b${1}${2}m",
            },
            {
                "source_labels": ["c", "a"],
                "regex": "(b).*b(.*)ba(.*)",
                "target_label": "d",
                "replacement": "$1$2$2$3",
            },
        ],
        {"a": "boobam", "b": "bar", "c": "baz", "d": "boooom"},
    ),
    # drop stops the chain
    (
        "drop then replace",
        {"a": "foo"},
        [
            {"source_labels": ["a"], "regex": ".*o.*", "action": "drop"},
            {"source_labels": ["a"], "regex": "f(.*)", "target_label": "d", "replacement": "ch$1-ch$1"},
        ],
        None,
    ),
    (
        "drop matches",
        {"a": "foo", "b": "bar"},
        [{"source_labels": ["a"], "regex": ".*o.*", "action": "drop"}],
        None,
    ),
    # default replacement $1
    (
        "replace default replacement",
        {"a": "abc"},
        [{"source_labels": ["a"], "regex": ".*(b).*", "target_label": "d"}],
        {"a": "abc", "d": "b"},
    ),
    (
        "drop no match",
        {"a": "foo"},
        [{"source_labels": ["a"], "regex": "no-match", "action": "drop"}],
        {"a": "foo"},
    ),
    # anchored: "f|o" must match the whole value
    (
        "drop anchored",
        {"a": "foo"},
        [{"source_labels": ["a"], "regex": "f|o", "action": "drop"}],
        {"a": "foo"},
    ),
    ("keep no match", {"a": "foo"}, [{"source_labels": ["a"], "regex": "no-match", "action": "keep"}], None),
    ("keep match", {"a": "foo"}, [{"source_labels": ["a"], "regex": "f.*", "action": "keep"}], {"a": "foo"}),
    # replace whose regex does not match leaves labels alone
    (
        "replace no match",
        {"a": "boo"},
        [{"source_labels": ["a"], "regex": "f", "target_label": "b", "replacement": "bar"}],
        {"a": "boo"},
    ),
    # hashmod: Prometheus's own expected values
    (
        "hashmod",
        ABC,
        [{"source_labels": ["c"], "target_label": "d", "action": "hashmod", "modulus": 1000}],
        {**ABC, "d": "976"},
    ),
    (
        "hashmod newline",
        {"a": "foo\nbar"},
        [{"source_labels": ["a"], "target_label": "b", "action": "hashmod", "modulus": 1000}],
        {"a": "foo\nbar", "b": "734"},
    ),
    (
        "labelmap",
        {"a": "foo", "b1": "bar", "b2": "baz"},
        [{"regex": "(b.*)", "replacement": "bar_${1}", "action": "labelmap"}],
        {"a": "foo", "b1": "bar", "b2": "baz", "bar_b1": "bar", "bar_b2": "baz"},
    ),
    (
        "labelmap meta",
        {"a": "foo", "__meta_my_bar": "aaa", "__meta_my_baz": "bbb", "__meta_other": "ccc"},
        [{"regex": "__meta_(my.*)", "replacement": "${1}", "action": "labelmap"}],
        {
            "a": "foo",
            "__meta_my_bar": "aaa",
            "__meta_my_baz": "bbb",
            "__meta_other": "ccc",
            "my_bar": "aaa",
            "my_baz": "bbb",
        },
    ),
    # target_label built from a reference
    (
        "templated target",
        {"a": "some-name-value"},
        [
            {
                "source_labels": ["a"],
                "regex": "some-([^-]+)-([^,]+)",
                "replacement": "${2}",
                "target_label": "${1}",
            }
        ],
        {"a": "some-name-value", "name": "value"},
    ),
    # a replacement that expands to "" writes nothing
    (
        "empty replacement",
        {"a": "some-name-value"},
        [
            {
                "source_labels": ["a"],
                "regex": "some-([^-]+)-([^,]+)",
                "replacement": "${3}",
                "target_label": "${1}",
            }
        ],
        {"a": "some-name-value"},
    ),
    # target labels that expand to invalid names write nothing (built directly: the load refuses "0${3}")
    (
        "invalid targets",
        {"a": "some-name-value"},
        [
            RelabelRule(
                source_labels=("a",), regex="some-([^-]+)-([^,]+)", replacement="${1}", target_label=t
            )
            for t in ("${3}", "0${3}", "-${3}")
        ],
        {"a": "some-name-value"},
    ),
    (
        "real-life tags",
        {"__meta_sd_tags": TAGS},
        [
            {
                "source_labels": ["__meta_sd_tags"],
                "regex": "(?:.+,|^)path:(/[^,]+).*",
                "replacement": "${1}",
                "target_label": "__metrics_path__",
            },
            {
                "source_labels": ["__meta_sd_tags"],
                "regex": "(?:.+,|^)job:([^,]+).*",
                "replacement": "${1}",
                "target_label": "job",
            },
            {
                "source_labels": ["__meta_sd_tags"],
                "regex": "(?:.+,|^)label:([^=]+)=([^,]+).*",
                "replacement": "${2}",
                "target_label": "${1}",
            },
        ],
        {"__meta_sd_tags": TAGS, "__metrics_path__": "/secret", "job": "some-job", "foo": "bar"},
    ),
    (
        "labelkeep",
        {"a": "foo", "b1": "bar", "b2": "baz"},
        [{"regex": "(b.*)", "action": "labelkeep"}],
        {"b1": "bar", "b2": "baz"},
    ),
    (
        "labeldrop",
        {"a": "foo", "b1": "bar", "b2": "baz"},
        [{"regex": "(b.*)", "action": "labeldrop"}],
        {"a": "foo"},
    ),
    (
        "upper and lower",
        {"foo": "bAr123Foo"},
        [
            {"source_labels": ["foo"], "action": "uppercase", "target_label": "foo_uppercase"},
            {"source_labels": ["foo"], "action": "lowercase", "target_label": "foo_lowercase"},
        ],
        {"foo": "bAr123Foo", "foo_lowercase": "bar123foo", "foo_uppercase": "BAR123FOO"},
    ),
    (
        "keepequal equal",
        PORTS,
        [{"source_labels": ["__tmp_port"], "action": "keepequal", "target_label": "__port1"}],
        PORTS,
    ),
    (
        "dropequal equal",
        PORTS,
        [{"source_labels": ["__tmp_port"], "action": "dropequal", "target_label": "__port1"}],
        None,
    ),
    (
        "dropequal differ",
        PORTS,
        [{"source_labels": ["__tmp_port"], "action": "dropequal", "target_label": "__port2"}],
        PORTS,
    ),
    (
        "keepequal differ",
        PORTS,
        [{"source_labels": ["__tmp_port"], "action": "keepequal", "target_label": "__port2"}],
        None,
    ),
    # beyond Prometheus's table: Go's expansion rules and the builder's empty-value deletes
    (
        "$1x is the group named 1x: empty",
        {"a": "foo"},
        [{"source_labels": ["a"], "regex": "(f)oo", "target_label": "d", "replacement": "$1x"}],
        {"a": "foo"},
    ),
    (
        "$$ is a dollar, bare $ kept",
        {"a": "foo"},
        [{"source_labels": ["a"], "regex": "(f)oo", "target_label": "d", "replacement": "$$${1}-$-${x"}],
        {"a": "foo", "d": "$f-$-${x"},
    ),
    (
        "named group",
        {"a": "foo"},
        [{"source_labels": ["a"], "regex": "(?P<first>f)oo", "target_label": "d", "replacement": "$first"}],
        {"a": "foo", "d": "f"},
    ),
    (
        "missing source is empty",
        {"a": "foo"},
        [{"source_labels": ["a", "zz"], "target_label": "d"}],
        {"a": "foo", "d": "foo;"},
    ),
    (
        "custom separator",
        {"a": "x", "b": "y"},
        [{"source_labels": ["a", "b"], "separator": "/", "target_label": "d"}],
        {"a": "x", "b": "y", "d": "x/y"},
    ),
    (
        "lowercase of empty deletes",
        {"t": "X"},
        [{"source_labels": ["zz"], "action": "lowercase", "target_label": "t"}],
        {},
    ),
    (
        "replace to empty deletes",
        {"a": "", "t": "X"},
        [{"source_labels": ["a"], "target_label": "t"}],
        {"a": ""},
    ),
    (
        "dot does not match newline",
        {"a": "x\ny"},
        [{"source_labels": ["a"], "regex": ".*", "action": "keep"}],
        None,
    ),
    (
        "action is case-insensitive",
        {"a": "foo"},
        [{"source_labels": ["a"], "regex": "f.*", "action": "DROP"}],
        None,
    ),
]


@pytest.mark.parametrize(("labels", "rules", "want"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_relabel_matches_prometheus(labels: dict[str, str], rules: list[Any], want: Any) -> None:
    built = [r if isinstance(r, RelabelRule) else parse_relabel_configs([r])[0] for r in rules]
    assert relabel(labels, built) == want


REFUSED: list[tuple[dict[str, Any], str]] = [
    ({"action": ""}, "relabel action cannot be empty"),
    ({"action": "nope"}, "unknown relabel action 'nope'"),
    ({"action": "hashmod", "target_label": "x"}, "hashmod requires non-zero modulus"),
    ({"source_labels": ["a"]}, "replace action requires 'target_label' value"),
    ({"target_label": "-x"}, "'-x' is invalid 'target_label' for replace action"),
    ({"action": "lowercase", "target_label": "x", "replacement": "y"}, "'replacement' can not be set"),
    ({"action": "labelmap", "replacement": "-x"}, "'-x' is invalid 'replacement' for labelmap"),
    ({"action": "hashmod", "modulus": 2, "target_label": "${1}"}, "invalid 'target_label' for hashmod"),
    ({"action": "keepequal", "target_label": "x", "regex": "(.*)"}, "requires only 'source_labels'"),
    ({"action": "labeldrop", "source_labels": ["a"]}, "labeldrop action requires only 'regex'"),
    ({"action": "labelkeep", "separator": ","}, "labelkeep action requires only 'regex'"),
    ({"regex": "a(", "target_label": "x"}, "invalid regex 'a('"),
    ({"source_labels": ["0a"], "target_label": "x"}, "'0a' is not a valid label name"),
    ({"target_label": "x", "regexp": "a"}, "unknown field 'regexp'"),
    ({"action": "hashmod", "modulus": -1, "target_label": "x"}, "modulus must be a non-negative integer"),
]


@pytest.mark.parametrize(("rule", "message"), REFUSED, ids=[m for _, m in REFUSED])
def test_refused_at_load_naming_the_rule(rule: dict[str, Any], message: str) -> None:
    ok = {"source_labels": ["a"], "target_label": "b"}
    with pytest.raises(RelabelConfigError) as err:
        parse_relabel_configs([ok, rule], where="scrape_configs[0].relabel_configs")
    assert message in str(err.value)
    assert str(err.value).startswith("scrape_configs[0].relabel_configs[1]")


def test_every_prometheus_242_action_is_known() -> None:
    assert {a.value for a in RelabelAction} == {
        "replace",
        "keep",
        "drop",
        "keepequal",
        "dropequal",
        "hashmod",
        "labelmap",
        "labeldrop",
        "labelkeep",
        "lowercase",
        "uppercase",
    }
