from __future__ import annotations

import pytest

from inferwatch.model import Labels, Matcher, MatchOp, matches_all, parse_matcher, parse_matchers


@pytest.mark.parametrize(
    ("matcher", "value", "hit"),
    [
        (Matcher("code", MatchOp.RE, "5.."), "503", True),
        (Matcher("code", MatchOp.RE, "5.."), "1503", False),  # anchored, as in Prometheus
        (Matcher("code", MatchOp.NRE, "5.."), "200", True),
        (Matcher("a", MatchOp.EQ, ""), "", True),  # absent label matches ""
        (Matcher("a", MatchOp.NE, "x"), "", True),
    ],
)
def test_matcher_semantics(matcher: Matcher, value: str, hit: bool) -> None:
    assert matcher.matches(value) is hit


def test_missing_label_is_empty_string() -> None:
    assert matches_all([Matcher("team", MatchOp.EQ, "")], Labels({"job": "x"}))
    assert not matches_all([Matcher("team", MatchOp.RE, ".+")], Labels({"job": "x"}))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{severity="critical", service=~"rank.*"}',
         (Matcher("severity", MatchOp.EQ, "critical"), Matcher("service", MatchOp.RE, "rank.*"))),
        ("alertname!=Foo", (Matcher("alertname", MatchOp.NE, "Foo"),)),
        (['a="1"', "b!~x"], (Matcher("a", MatchOp.EQ, "1"), Matcher("b", MatchOp.NRE, "x"))),
        ('a="q\\"uote"', (Matcher("a", MatchOp.EQ, 'q"uote'),)),
    ],
)
def test_parse(text: str | list[str], expected: tuple[Matcher, ...]) -> None:
    assert parse_matchers(text) == expected


@pytest.mark.parametrize("bad", ["", "a", "=b", 'a=~"("', "a=1 b=2"])
def test_parse_errors_name_the_text(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_matcher(bad)
