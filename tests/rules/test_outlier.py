"""Issue 55: the ``outlier:`` rule kind — config checks, the judgement, and its PromQL form."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.rules._helpers import load

from inferwatch._exceptions import ConfigError
from inferwatch.config import OutlierSpec, parse_config
from inferwatch.model import Labels, SimulatedClock
from inferwatch.promql import parse_promql
from inferwatch.rules import Evaluator, load_rules
from inferwatch.rules._engine import QueryEngine
from inferwatch.rules._outlier import peer_groups
from inferwatch.rules._outlier_promql import outlier_condition

RULE = """
rules:
  default_pack: false
  rules:
    - name: ReplicaSlow
      dimension: service
      tier: P1
      outlier:
        expr: 'p99'
        peers_by: [model]
        member: instance
{extra}
      for: 2m
"""


def _config(extra: str) -> str:
    return RULE.format(extra="\n".join(f"        {line}" for line in extra.splitlines()))


@pytest.mark.parametrize(("extra", "message"), [
    # min_deviation is required: identical peers have a MAD of 0
    ("tolerance: 3", "min_deviation"),
    ("algorithm: dbscan\nmin_deviation: 0.1", "dbscan needs eps"),
    ("eps: 0.1\nmin_deviation: 0.1", "eps is dbscan's setting"),
    ("min_deviation: 0.1\nmin_peers: 2", "min_peers"),
    ("min_deviation: -1", "min_deviation"),
    ("min_deviation: 0.1\ntolerance: 0", "tolerance"),
    ("min_deviation: 0.1\nalgorithm: zscore", "algorithm"),
])
def test_bad_outlier_settings_are_refused_at_load_naming_the_field(extra: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(_config(extra))


def test_member_in_peers_by_and_signal_beside_outlier_are_refused() -> None:
    with pytest.raises(ConfigError, match="member 'model' cannot also be in peers_by"):
        parse_config(RULE.replace("member: instance", "member: model").format(
            extra="        min_deviation: 1"))
    with pytest.raises(ConfigError, match="an outlier rule takes no signal, threshold"):
        parse_config(_config("min_deviation: 1").replace(
            "      for: 2m", "      signal: up\n      threshold: 1\n      for: 2m"))


def test_a_bad_expression_or_template_names_the_rule() -> None:
    with pytest.raises(ConfigError, match="rule ReplicaSlow: outlier"):
        load_rules(parse_config(_config("min_deviation: 1").replace("'p99'", "'sum by ('")))
    with pytest.raises(ConfigError, match=r"\$median, \$spread and \$peers exist in outlier rules only"):
        load_rules(parse_config("rules:\n  default_pack: false\n  rules:\n    - {name: X, dimension: "
                                "service, tier: P2, signal: up, threshold: 1, annotations: "
                                "{s: '{{ $median }}'}}\n"))


def _spec(**kw: object) -> OutlierSpec:
    return OutlierSpec.model_validate({"expr": "x", "peers_by": ["model"], "member": "instance",
                                       "min_deviation": 0.0, **kw})


def _vec(values: dict[str, float], model: str = "m") -> list[tuple[Labels, float]]:
    return [(Labels({"model": model, "instance": k}), v) for k, v in values.items()]


def _outliers(spec: OutlierSpec, vec: list[tuple[Labels, float]]) -> set[str]:
    return {m.name("instance") for g in peer_groups(spec, vec) for m in g.members if m.outlier}


def test_mad_zero_pages_only_past_min_deviation() -> None:
    # rule: identical peers (MAD 0) never divide by zero; min_deviation alone decides
    vec = _vec({"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.001, "e": 2.0})
    assert _outliers(_spec(min_deviation=0.5), vec) == {"e"}
    assert _outliers(_spec(min_deviation=0.0), vec) == {"d", "e"}


def test_direction_nan_members_and_min_peers() -> None:
    vec = _vec({"a": 1.0, "b": 1.1, "c": 0.9, "hi": 5.0, "lo": -3.0, "gone": float("nan")})
    assert _outliers(_spec(direction="above"), vec) == {"hi"}
    assert _outliers(_spec(direction="below"), vec) == {"lo"}
    assert _outliers(_spec(), vec) == {"hi", "lo"}
    # two members (NaN is no member): the group is not judged
    small = _vec({"a": 1.0, "b": 9.0, "c": float("nan")})
    (group,) = peer_groups(_spec(), small)
    assert not group.judged and _outliers(_spec(), small) == set()


def test_dbscan_pages_members_outside_the_majority_cluster_only() -> None:
    spec = _spec(algorithm="dbscan", eps=0.15, min_deviation=0.2)
    assert _outliers(spec, _vec({"a": 1.0, "b": 1.1, "c": 1.2, "d": 1.25, "e": 2.0})) == {"e"}
    # a chain of close values is one cluster, however wide
    assert _outliers(spec, _vec({"a": 1.0, "b": 1.1, "c": 1.2, "d": 1.3, "e": 1.4})) == set()
    # no majority cluster: nothing to compare with, nothing pages
    assert _outliers(spec, _vec({"a": 1.0, "b": 1.1, "c": 3.0, "d": 3.1})) == set()


def test_peers_text_is_sorted_and_truncated() -> None:
    vec = _vec({k: 1.0 for k in "abcdefgh"} | {"z": 9.0})
    (group,) = peer_groups(_spec(min_deviation=1), vec)
    (bad,) = [m for m in group.members if m.outlier]
    assert group.others(bad, "instance") == "a=1 b=1 c=1 d=1 e=1 …"


_VALUES = st.lists(st.sampled_from([0.1, 0.2, 0.2, 0.25, 0.3, 1.0, 5.0, 0.0, float("inf"), float("nan")]),
                   min_size=1, max_size=9)


@settings(max_examples=60, deadline=None)
@given(groups=st.lists(_VALUES, min_size=1, max_size=3), tolerance=st.sampled_from([0.5, 1.0, 3.0]),
       min_dev=st.sampled_from([0.0, 0.05, 0.5]), direction=st.sampled_from(["above", "below", "both"]))
def test_the_exported_promql_selects_the_same_members_as_the_judgement(
    groups: list[list[float]], tolerance: float, min_dev: float, direction: str,
) -> None:
    # rule: native == PromQL (the exported condition, run by inferwatch's PromQL engine)
    spec = _spec(expr="x", tolerance=tolerance, min_deviation=min_dev, direction=direction)
    series = {f'x{{model="g{gi}",instance="i{i}"}}': str(v).replace("inf", "Inf").replace("nan", "NaN")
              for gi, vals in enumerate(groups) for i, v in enumerate(vals)}
    store = load(series, 60.0)
    vec = QueryEngine(store).instant(parse_promql("x"), 0.0)
    assert isinstance(vec, list)
    cond = outlier_condition(spec)
    assert cond is not None
    got = QueryEngine(store).instant(parse_promql(cond), 0.0)
    assert isinstance(got, list)
    want = {(m.labels.get("model"), m.name("instance")) for g in peer_groups(spec, vec) for m in g.members
            if m.outlier}
    assert {(lab.get("model"), lab.get("instance")) for lab, _ in got} == want


def test_the_evaluator_keeps_each_groups_last_judgement_for_the_views() -> None:
    cfg = parse_config(_config("min_deviation: 0.05\ndirection: above"))
    store = load({'p99{model="m",instance="a"}': "0.2", 'p99{model="m",instance="b"}': "0.21",
                  'p99{model="m",instance="c"}': "0.9"}, 60.0)
    ev = Evaluator(load_rules(cfg), store, clock=SimulatedClock(0))
    assert ev.peer_status("ReplicaSlow") is None
    ev.evaluate(0.0)
    status = ev.peer_status("ReplicaSlow")
    assert status is not None
    ts, (group,) = status
    assert ts == 0.0 and group.median == 0.21
    assert [m.outlier for m in group.members] == [False, False, True]
    assert [a.labels["instance"] for a in ev.active()] == ["c"]
