"""The alerting config: fuzzed input gives a ConfigError naming the field, never a crash."""

from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from inferwatch._exceptions import ConfigError
from inferwatch.config import parse_config

scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8),
                    st.sampled_from(["5m", "0s", "-1s", "...", 'a="b"', "a=~(", "wecom", "terminal"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(
        ["receiver", "matchers", "group_by", "group_wait", "routes", "continue", "name", "type", "key",
         "url", "source_matchers", "target_matchers", "equal", "at", "timezone", "deliver_to"]),
        inner, max_size=4)), max_leaves=10)
sections = st.dictionaries(st.sampled_from(["route", "inhibit_rules", "receivers", "actions", "notify",
                                            "resolve_timeout", "default_actions"]), values, max_size=3)


@settings(max_examples=150, deadline=None)
@given(sections)
def test_fuzzed_alerting_sections_fail_cleanly(section: dict[str, object]) -> None:
    text = yaml.safe_dump({"alerting": section})
    try:
        cfg = parse_config(text)
    except ConfigError as exc:
        assert "alerting" in str(exc)
    else:
        assert cfg.alerting.route.receiver


def test_unknown_receiver_in_route_is_named() -> None:
    try:
        parse_config("alerting: {route: {receiver: terminal, routes: [{receiver: pager}]}}")
    except ConfigError as exc:
        assert "unknown receivers ['pager']" in str(exc)
    else:
        raise AssertionError("expected a ConfigError")
