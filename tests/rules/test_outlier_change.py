"""Issue 55: ``outlier: change:`` — the member's own history next to the peer test."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from tests.rules._helpers import load

from inferwatch._exceptions import ConfigError
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock
from inferwatch.rules import AlertState, Evaluator, load_rules, to_prometheus_rule_groups
from inferwatch.rules._outlier_change import ChangeTracker
from inferwatch.rules._state import AlertStateStore
from inferwatch.store import MemoryStore

STEP = 30.0
STEPS = 100
RULE = """
rules:
  default_pack: false
  rules:
    - name: ReplicaSlow
      dimension: service
      tier: P1
      outlier:
        expr: p99
        peers_by: [model]
        member: instance
        tolerance: 2
        min_deviation: 0.02
        direction: above
        change: {window: 3m30s, before: 1m30s, tolerance: 2.75}
"""


def _value(j: int, i: int) -> float:
    """Eight replicas around 0.2 s, each with its own bias and a little noise (deterministic)."""
    return 0.2 * (1 + 0.03 * math.sin(1.7 * j)) * (1 + 0.05 * math.sin(0.9 * i + 2.3 * j))


def _fleet(**change: list[float]) -> MemoryStore:
    """``change[member][i]`` multiplies member's value at step i (members a..h)."""
    series = {}
    for j, name in enumerate("abcdefgh"):
        factors = change.get(name, [1.0] * STEPS)
        series[f'p99{{model="m",instance="{name}"}}'] = " ".join(
            repr(_value(j, i) * factors[i]) for i in range(STEPS))
    return load(series, STEP)


def _firing(ev: Evaluator, until: int, start: int = 0) -> dict[int, set[str]]:
    out = {}
    for i in range(start, until):
        ev.evaluate(i * STEP)
        out[i] = {a.labels["instance"] for a in ev.active() if a.state is AlertState.FIRING}
    return out


def test_a_lasting_step_pages_once_its_window_passed_and_a_spike_or_a_ramp_never() -> None:
    step = [1.0] * 20 + [1.5] * 40 + [1.0] * 40      # 1.5x from 10 min to 30 min
    spike = [1.0] * 40 + [1.8] * 4 + [1.0] * 56      # 1.8x for 2 minutes
    ramp = [1.0] * 50 + [1 + 0.5 * k / 30 for k in range(30)] + [1.5] * 20   # to 1.5x over 15 min
    ev = Evaluator(load_rules(parse_config(RULE)), _fleet(a=step, b=spike, c=ramp), clock=SimulatedClock(0))
    firing = _firing(ev, STEPS)
    # the window (3m30s: seven evaluations) must lie wholly after the step: steps 20..26
    assert [i for i, f in firing.items() if "a" in f][:1] == [26]
    assert all("a" in firing[i] for i in range(26, 60))        # kept while 2 spreads above the median
    assert not any("a" in firing[i] for i in range(61, STEPS))  # resolved once back
    assert not any(f - {"a"} for f in firing.values())          # neither the spike nor the ramp pages


def test_the_plain_peer_test_would_page_the_spike_and_the_ramp() -> None:
    # the same fleet judged by the peer test alone (what `change` adds is the difference)
    spike = [1.0] * 40 + [1.8] * 4 + [1.0] * 56
    ramp = [1.0] * 50 + [1 + 0.5 * k / 30 for k in range(30)] + [1.5] * 20
    plain = RULE.replace("        change: {window: 3m30s, before: 1m30s, tolerance: 2.75}\n", "")
    ev = Evaluator(load_rules(parse_config(plain)), _fleet(b=spike, c=ramp), clock=SimulatedClock(0))
    assert {m for f in _firing(ev, STEPS).values() for m in f} == {"b", "c"}


def test_member_history_survives_a_restart_through_the_state_store(tmp_path: Path) -> None:
    step = [1.0] * 20 + [1.5] * 40 + [1.0] * 40
    rules = load_rules(parse_config(RULE))
    whole = _firing(Evaluator(rules, _fleet(a=step), clock=SimulatedClock(0)), 40)
    state = AlertStateStore(tmp_path / "alerts.db")
    first = Evaluator(rules, _fleet(a=step), clock=SimulatedClock(0), state=state)
    before = _firing(first, 23)              # stopped mid-window
    first.save_state()
    state.close()
    state = AlertStateStore(tmp_path / "alerts.db")
    second = Evaluator(rules, _fleet(a=step), clock=SimulatedClock(23 * STEP), state=state)
    after = _firing(second, 40, start=23)
    state.close()
    assert before | after == whole          # same pages at the same times as without the restart
    assert any(whole.values())
    # without the saved history the member's step is not in what it has seen: no page by `change`
    fresh = _firing(Evaluator(rules, _fleet(a=step), clock=SimulatedClock(0)), 40, start=23)
    assert not any(fresh.values())


def test_a_damaged_saved_state_is_ignored() -> None:
    cfg = parse_config(RULE)
    (rule,) = load_rules(cfg)
    assert rule.outlier is not None
    tracker = ChangeTracker(rule.outlier)
    for bad in ({}, {"spread": 1}, {"spread": {}, "history": {"k": [[1]]}, "outlier": []}, None):
        tracker.restore_state(bad)
        assert tracker.export_state() == {"spread": {}, "history": {}, "outlier": []}


def test_change_has_no_promql_form_and_needs_mad() -> None:
    rules = load_rules(parse_config(RULE))
    assert rules[0].expr is None
    assert to_prometheus_rule_groups(rules) == {"groups": []}
    with pytest.raises(ConfigError, match="change works with algorithm mad"):
        parse_config(RULE.replace("tolerance: 2\n", "algorithm: dbscan\n        eps: 0.1\n"))
    with pytest.raises(ConfigError, match="window"):
        parse_config(RULE.replace("window: 3m30s", "window: 0s"))


def test_both_directions_page_a_step_on_the_side_the_member_now_is() -> None:
    both = RULE.replace("direction: above", "direction: both")
    up = [1.0] * 20 + [1.5] * 80
    down = [1.0] * 20 + [0.5] * 80
    back = [1.0] * 10 + [1.8] * 4 + [1.0] * 86       # the end of a spike is a step down, back home
    ev = Evaluator(load_rules(parse_config(both)), _fleet(a=up, b=down, c=back), clock=SimulatedClock(0))
    firing = _firing(ev, 40)
    assert firing[26] == {"a", "b"} and not any("c" in f for f in firing.values())


def test_share_lets_one_value_of_the_window_fall_back() -> None:
    # 1.5x from step 20 with one value back at 1x at step 23 (a noisy look inside the window)
    dip = [1.0] * 20 + [1.5] * 3 + [1.0] + [1.5] * 76
    every = load_rules(parse_config(RULE))
    most = load_rules(parse_config(RULE.replace("tolerance: 2.75}", "tolerance: 2.75, share: 0.85}")))
    strict = _firing(Evaluator(every, _fleet(a=dip), clock=SimulatedClock(0)), 40)
    share = _firing(Evaluator(most, _fleet(a=dip), clock=SimulatedClock(0)), 40)
    # 0.85 of seven values: six must have moved; with every one, the window must pass the dip first
    assert [i for i, f in share.items() if "a" in f][:1] == [26]
    assert not any("a" in f for f in strict.values())  # and once past it, the level before is 1.5x
    with pytest.raises(ConfigError, match="share"):
        parse_config(RULE.replace("tolerance: 2.75}", "tolerance: 2.75, share: 0}"))


def _group(spec_rule: str, values: dict[str, float]) -> list:
    from inferwatch.model import Labels
    from inferwatch.rules._outlier import peer_groups
    (rule,) = load_rules(parse_config(spec_rule))
    assert rule.outlier is not None
    vector = [(Labels({"model": "m", "instance": k}), v) for k, v in values.items()]
    return peer_groups(rule.outlier, vector)


def test_a_step_counts_from_the_median_not_from_the_other_side() -> None:
    # a healthy member above its peers comes back and ends a little below them: on a `below` rule
    # the move from +6.5 spreads to -2.4 is a return (2.4 spreads past the median, under 2.75;
    # measured from +6.5 it was a step of 8.9, which paged before the step was counted from the median)
    below = RULE.replace("direction: above", "direction: below").replace("min_deviation: 0.02",
                                                                        "min_deviation: 0.005")
    (rule,) = load_rules(parse_config(below))
    assert rule.outlier is not None
    tracker = ChangeTracker(rule.outlier)
    peers = {"b": 0.19, "c": 0.193, "d": 0.196, "e": 0.2, "f": 0.204, "g": 0.207, "h": 0.21}
    path = [0.2] * 10 + [0.26] * 6 + [0.176] * 20
    outliers = []
    for i, a in enumerate(path):
        (group,) = tracker.judge(i * STEP, _group(below, {"a": a, **peers}))
        outliers.append(any(m.outlier for m in group.members))
    assert not any(outliers)
    # the same member stepping down from the median to -3.4 spreads pages, once its window passed
    tracker = ChangeTracker(rule.outlier)
    path = [0.2] * 16 + [0.17] * 20
    hits = [any(m.outlier for m in tracker.judge(i * STEP, _group(below, {"a": a, **peers}))[0].members)
            for i, a in enumerate(path)]
    assert hits.index(True) == 22


def test_the_averaged_spread_starts_from_the_mean_of_what_it_has_seen() -> None:
    (rule,) = load_rules(parse_config(RULE))
    assert rule.outlier is not None
    tracker = ChangeTracker(rule.outlier)
    tracker.judge(0.0, _group(RULE, {"a": 0.19, "b": 0.2, "c": 0.21}))   # spread 1.4826 x 0.01
    tracker.judge(STEP, _group(RULE, {"a": 0.17, "b": 0.2, "c": 0.23}))  # 1.4826 x 0.03
    (spread, weight, at) = tracker.export_state()["spread"]['["m"]']
    # the two spreads' weighted mean (not the first one barely moved, as a cold average would be)
    decay = math.exp(-STEP / 3600)
    assert spread == pytest.approx(1.4826 * (0.01 * decay + 0.03) / (decay + 1))
    assert weight == pytest.approx(1 + decay) and at == STEP
    # a state saved before the weight ([spread, at]) is restored as a settled average
    tracker.restore_state({"spread": {'["m"]': [0.5, 10.0]}, "history": {}, "outlier": []})
    assert tracker.export_state()["spread"] == {'["m"]': [0.5, 100.0, 10.0]}


def test_a_default_step_rule_mutes_its_peer_test_twin_for_the_same_member_only() -> None:
    from inferwatch.alerting.mute import Inhibitor, InhibitRule
    from inferwatch.model import Labels
    from inferwatch.rules import Alert, default_rule_pack

    names = {r.name for r in default_rule_pack()}
    inhibitor = Inhibitor(InhibitRule.build(r) for r in parse_config("").alerting.inhibit_rules)
    member = {"service": "search", "model": "ranker", "version": "3", "instance": "a"}
    for step, twin in (("ReplicaSlowStep", "ReplicaSlow"), ("ReplicaConfidenceStep", "ReplicaConfidenceLow")):
        assert {step, twin} <= names
        inhibitor.update([Alert(Labels({"alertname": step, **member}), starts_at=0.0)])
        assert inhibitor.mutes({"alertname": twin, **member}, 1.0)
        assert not inhibitor.mutes({"alertname": twin, **member, "instance": "b"}, 1.0)
    assert not inhibitor.mutes({"alertname": "ReplicaErrors", **member}, 1.0)
    gpu = {"model": "ranker", "UUID": "GPU-1"}
    inhibitor.update([Alert(Labels({"alertname": "GPUUtilizationStep", **gpu}), starts_at=0.0)])
    assert inhibitor.mutes({"alertname": "GPUUtilizationOutlier", **gpu}, 1.0)
    assert not inhibitor.mutes({"alertname": "GPUUtilizationOutlier", **gpu, "UUID": "GPU-2"}, 1.0)
    # each step rule has no PromQL form: the export leaves it out, its twin is exported
    assert all(r.expr is None for r in default_rule_pack() if r.name.endswith("Step"))
