from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inferwatch.model import Labels, is_valid_label_name, is_valid_metric_name

names = st.from_regex(r"[a-z_][a-z0-9_]{0,8}", fullmatch=True)
values = st.text(min_size=1, max_size=8)


@given(st.dictionaries(names, values, max_size=6))
def test_order_of_construction_does_not_matter(d: dict[str, str]) -> None:
    # Series identity is the sorted label set, whatever order labels arrive in.
    a = Labels(d)
    b = Labels(list(reversed(list(d.items()))))
    assert a == b and hash(a) == hash(b) and a.fingerprint() == b.fingerprint()


def test_fingerprint_is_stable_across_processes() -> None:
    # Persisted state (alert state, notification log) keys on this: it must never change.
    assert Labels.of("up", job="a").fingerprint() == "35281fec350452a4"


def test_str_escapes_like_prometheus() -> None:
    ls = Labels.of("m", path='a"b\\c\nd')
    assert str(ls) == 'm{path="a\\"b\\\\c\\nd"}'


def test_empty_values_are_absent_labels() -> None:
    # In Prometheus a label with an empty value is the same as no label.
    assert Labels({"a": "1", "b": ""}) == Labels({"a": "1"})


def test_derivations() -> None:
    ls = Labels.of("req", service="s", route="/p")
    assert ls.without_name() == Labels({"service": "s", "route": "/p"})
    assert ls.keep(["service"]) == Labels({"service": "s"})
    assert ls.with_(route="") == Labels.of("req", service="s")


@pytest.mark.parametrize(
    ("name", "ok"),
    [("up", True), ("a:b_c", True), ("9lives", False), ("a-b", False), ("", False)],
)
def test_metric_names(name: str, ok: bool) -> None:
    assert is_valid_metric_name(name) is ok


def test_label_names_disallow_colon() -> None:
    assert is_valid_label_name("job") and not is_valid_label_name("a:b")
