"""On call on simulated time: escalation, acknowledgement, history, MTTA/MTTR, links, schedules."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import ConfigError, InputError
from inferwatch.alerting import Pipeline, RecordingNotifier, StateDB
from inferwatch.alerting.oncall._acks import group_id
from inferwatch.alerting.oncall._schedule import oncall_at, shifts
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock, parse_matchers

ESCALATING = """
alerting:
  default_actions: false
  receivers: [{name: second, type: terminal}, {name: third, type: terminal}]
  escalations:
    - name: p0
      steps:
        - {after: 0s, notify: [phone]}
        - {after: 5m, notify: [second]}
        - {after: 15m, notify: [third], repeat: 1, every: 10m}
  route: {receiver: terminal, group_wait: 0s, group_interval: 1m, repeat_interval: 10m,
          routes: [{matchers: ['tier="P0"'], receiver: phone, escalation: p0}]}
"""


def make(yaml: str = ESCALATING, db: StateDB | None = None, key: bytes | None = None,
         url: str = "") -> tuple[Pipeline, dict[str, RecordingNotifier]]:
    cfg = parse_config(yaml).alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    p = Pipeline(cfg, db=db, clock=SimulatedClock(0), notifiers=recs, actions=[], rng=random.Random(1),
                 ack_key=key, external_url=url)
    return p, recs


def run(p: Pipeline, until: float, step: float = 10.0, start: float = 0.0) -> None:
    t = start
    while t <= until:
        p.send([alert("Down", tier="P0")], now=t)  # the evaluator re-sends a firing alert
        p.tick(t)
        t += step


def steps(recs: dict[str, RecordingNotifier]) -> list[tuple[str, int]]:
    return [(name, n.step) for name, r in recs.items() for n in r.sent if n.step]


def test_steps_go_out_on_time_and_the_last_one_repeats() -> None:
    # rule: step i at start + after_i; repeat: 1 sends the last step once more `every` later
    p, recs = make()
    run(p, 1500)
    got = sorted(steps(recs), key=lambda s: s[1])
    assert got == [("phone", 1), ("second", 2), ("third", 3), ("third", 3)]
    assert [h.t for h in p.oncall.history.query(kinds=("escalated",))] == [0.0, 300.0, 900.0, 1500.0]
    assert "Escalation p0: step 2 of 3" in recs["second"].sent[0].notes[0]


def test_an_acknowledgement_stops_steps_and_repeats_and_ends_with_the_resolution() -> None:
    # rule: acked -> no further step, no repeat; resolved -> the ack ends; firing again -> step 1 again
    p, recs = make()
    run(p, 170)
    (ack,) = p.acknowledge(180, "ops", "on it", matchers=parse_matchers('alertname="Down"'))
    run(p, 1800, start=180)
    assert steps(recs) == [("phone", 1)] and len(recs["phone"].sent) == 1  # no repeat at 600
    p.send([alert("Down", tier="P0", end=1810)], now=1810)
    p.tick(1860)
    assert recs["phone"].sent[-1].groups[0].status == "resolved"
    assert p.acks.get(ack.group_key, 1860) is None
    run(p, 2200, start=1900)
    assert steps(recs) == [("phone", 1), ("phone", 1), ("second", 2)]


def test_unacknowledge_lets_the_due_step_go_out_at_once() -> None:
    p, recs = make()
    run(p, 100)
    p.acknowledge(100, "ops", matchers=parse_matchers('tier="P0"'))
    run(p, 400, start=110)
    assert steps(recs) == [("phone", 1)]
    p.unacknowledge(405, "ops", matchers=parse_matchers('tier="P0"'))
    assert steps(recs) == [("phone", 1), ("second", 2)]


def test_an_expiring_acknowledgement_lets_escalation_resume_on_its_own() -> None:
    # rule: an ack with an expiry holds the steps until then; the pipeline wakes at the expiry
    p, recs = make()
    run(p, 0)
    p.acknowledge(10, "ops", matchers=parse_matchers('tier="P0"'), expires_at=400)
    p.tick(20)
    assert p.next_wakeup() == 60  # the next group_interval flush; the expiry (400) is later
    run(p, 390, start=30)
    assert steps(recs) == [("phone", 1)]
    run(p, 400, start=400)
    assert steps(recs) == [("phone", 1), ("second", 2)]


def test_acknowledge_errors_name_the_problem() -> None:
    p, _ = make()
    run(p, 0)
    with pytest.raises(InputError, match="no firing alerts matching"):
        p.acknowledge(10, "ops", matchers=parse_matchers('service="nope"'))
    with pytest.raises(InputError, match="'by'"):
        p.acknowledge(10, " ", matchers=parse_matchers('tier="P0"'))
    with pytest.raises(InputError, match="group id or matchers"):
        p.acknowledge(10, "ops")


def test_escalation_survives_a_restart_without_repeating_a_step(tmp_path: Path) -> None:
    db = StateDB(tmp_path / "a.sqlite")
    p, recs = make(db=db)
    run(p, 310)
    assert steps(recs) == [("phone", 1), ("second", 2)]
    db.close()
    p2, recs2 = make(db=StateDB(tmp_path / "a.sqlite"))
    run(p2, 950, start=320)
    assert steps(recs2) == [("third", 3)]


def test_history_records_each_kind_and_answers_matchers_and_times() -> None:
    p, _ = make()
    run(p, 400)
    p.acknowledge(400, "ops", "on it", matchers=parse_matchers('tier="P0"'))
    p.send([alert("Down", tier="P0", end=600)], now=600)
    p.tick(600)
    kinds = [e.kind for e in p.oncall.history.query()]
    assert kinds[:2] == ["firing", "escalated"] and "notified" in kinds and kinds[-1] == "notified"
    assert {"acknowledged", "resolved"} <= set(kinds)
    told = [e.detail for e in p.oncall.history.query(kinds=("notified",))]
    assert told[0]["receiver"] == "phone" and told[0]["outcome"] == "sent" and told[0]["step"] == 1
    assert p.oncall.history.query([parse_matchers('service="other"')]) == []
    assert p.oncall.history.query([parse_matchers('tier="P0"')], kinds=("notified",))  # common labels
    assert [e.kind for e in p.oncall.history.query(start=399, end=401)] == ["acknowledged"]
    (row,) = p.oncall.history.response_times(0, 1000)
    assert row["service"] == "ranker" and row["tier"] == "P0"
    assert row["mtta_seconds"] == 400 and row["mttr_seconds"] == 600


def test_history_keeps_its_retention_and_size_bound() -> None:
    from inferwatch.alerting.oncall._history import Event, History

    h = History(StateDB(":memory:"), retention=100.0, max_events=1000)
    h.add([Event(float(t), "firing", {"alertname": "A"}) for t in range(1500)])
    assert h.count() == 101 and h.query()[0].t == 1399.0  # older than the retention (100 s): gone
    big = History(StateDB(":memory:"), retention=1e9, max_events=1000)
    big.add([Event(float(t), "firing", {"alertname": "A"}) for t in range(1500)])
    assert big.count() == 1000 and big.query()[0].t == 500.0  # beyond the size bound: the oldest go


def test_silenced_and_inhibited_alerts_are_history_events() -> None:
    from inferwatch.alerting import Silence

    p, _ = make("alerting: {route: {receiver: terminal, group_wait: 0s}}")
    p.silences.add(Silence.new(['service="ranker"'], 0, 100, "ops", "deploy"), 0)
    p.send([alert()], now=1)
    p.tick(1)
    (e,) = p.oncall.history.query(kinds=("silenced",))
    assert e.labels["service"] == "ranker" and e.detail["by"]


def _link_params(n: object) -> dict[str, str]:
    from urllib.parse import parse_qsl

    (note,) = [x for x in n.notes if x.startswith("Acknowledge: ")]  # type: ignore[attr-defined]
    link = note.removeprefix("Acknowledge: ")
    assert link.startswith("https://iw.example.com/api/v1/alerts/ack/link?group=")
    assert "token" not in link
    return dict(parse_qsl(link.split("?", 1)[1]))


def test_notifications_carry_a_signed_link_that_verifies_only_its_group() -> None:
    from inferwatch.alerting import LinkRefused

    p, recs = make(key=b"k" * 32, url="https://iw.example.com")
    run(p, 0)
    params = _link_params(recs["phone"].sent[0])
    key = recs["phone"].sent[0].groups[0].key
    gid = group_id(key)
    assert params["group"] == gid and float(params["expires"]) == 86400.0  # 24 h after it was sent
    # within one half-day step a flush carries the same link (the outbox sees the same notification)
    assert p.ack_links.url(key, 600) == p.ack_links.url(key, 0) != p.ack_links.url(key, 43200)
    assert p.ack_links.verify(params, {gid: key}, 10) == key
    for bad in ({**params, "group": "0" * 16}, {**params, "expires": "999999"}, {**params, "sig": "0" * 32}):
        with pytest.raises(LinkRefused, match="bad signature"):
            p.ack_links.verify(bad, {bad["group"]: key}, 10)
    with pytest.raises(LinkRefused, match="expired"):
        p.ack_links.verify(params, {gid: key}, 86400)


def test_a_link_from_an_earlier_episode_is_refused_after_the_group_fires_again() -> None:
    # rule: a link acknowledges the episode it was sent for, never a later firing of the same group
    from inferwatch.alerting import LinkRefused

    p, recs = make(key=b"k" * 32, url="https://iw.example.com")
    run(p, 0)
    first = _link_params(recs["phone"].sent[0])
    key = recs["phone"].sent[0].groups[0].key
    p.send([alert("Down", tier="P0", end=20)], now=20)
    p.tick(80)
    assert recs["phone"].sent[-1].groups[0].status == "resolved"
    run(p, 200, start=200)
    second = _link_params(recs["phone"].sent[-1])
    assert second["episode"] != first["episode"]
    with pytest.raises(LinkRefused, match="episode is over"):
        p.ack_links.verify(first, {group_id(key): key}, 210)
    assert p.ack_links.verify(second, {group_id(key): key}, 210) == key


def test_acks_work_on_routes_without_escalation_too() -> None:
    # rule: an acknowledged group gets no repeats, but news (a new alert) still goes out
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s, group_interval: 1m, "
                   "repeat_interval: 5m}}")
    p.send([alert(instance="a")], now=0)
    p.tick(0)
    p.acknowledge(10, "ops", matchers=parse_matchers('instance="a"'))
    for t in range(60, 700, 60):
        p.send([alert(instance="a")], now=t)
        p.tick(t)
    assert len(recs["terminal"].sent) == 1
    p.send([alert(instance="a"), alert(instance="b")], now=700)
    p.tick(720)
    assert len(recs["terminal"].sent) == 2
    assert "Acknowledged by ops" in recs["terminal"].sent[1].notes  # shown where the group is shown


SCHEDULE = """
alerting:
  receivers: [{name: sms, type: terminal}]
  oncall:
    schedules:
      - name: ml
        timezone: America/New_York
        rotation: 1d
        handoff: "09:00"
        start: "2026-03-01"
        layers:
          - name: primary
            members: [{name: alice, contacts: {sms: "+1555001"}}, {name: bob, contacts: {sms: "+1555002"}}]
          - {name: secondary, offset: 1, members: [{name: alice}, {name: bob}]}
        overrides:
          - {layer: primary, member: carol, start: "2026-03-10T12:00", end: "2026-03-10T18:00",
             contacts: {sms: "+1555003"}}
  escalations:
    - name: p0
      steps: [{after: 0s, notify: ["schedule:ml/primary"]}]
  route: {receiver: terminal, group_wait: 0s,
          routes: [{matchers: ['tier="P0"'], receiver: phone, escalation: p0}]}
"""


def _t(text: str, tz: str = "America/New_York") -> float:
    import zoneinfo

    return datetime.fromisoformat(text).replace(tzinfo=zoneinfo.ZoneInfo(tz)).timestamp()


def test_rotation_hands_off_at_local_time_across_daylight_saving() -> None:
    spec = parse_config(SCHEDULE).alerting.oncall.schedules[0]
    primary, secondary = spec.layers
    assert oncall_at(spec, primary, _t("2026-03-01T09:00")).member == "alice"
    assert oncall_at(spec, primary, _t("2026-03-02T08:59")).member == "alice"
    assert oncall_at(spec, secondary, _t("2026-03-02T08:59")).member == "bob"
    # DST starts on 2026-03-08 in New York: the hand-off stays at 09:00 local (13:00 UTC, not 14:00)
    shift = oncall_at(spec, primary, _t("2026-03-08T10:00"))
    assert datetime.fromtimestamp(shift.start, UTC).hour == 13 and shift.end - shift.start == 86400


def test_an_override_holds_the_layer_and_cuts_the_turn_short() -> None:
    spec = parse_config(SCHEDULE).alerting.oncall.schedules[0]
    primary = spec.layers[0]
    before = oncall_at(spec, primary, _t("2026-03-10T10:00"))
    assert before.member == "bob" and before.end == _t("2026-03-10T12:00")
    during = oncall_at(spec, primary, _t("2026-03-10T13:00"))
    assert during.member == "carol" and during.override and dict(during.contacts) == {"sms": "+1555003"}
    (row, _) = shifts(parse_config(SCHEDULE).alerting.oncall, _t("2026-03-10T13:00"))
    assert row["next"]["member"] == "bob"  # type: ignore[index]


def test_a_step_to_a_schedule_layer_tells_the_member_on_call() -> None:
    cfg = parse_config(SCHEDULE).alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    t0 = _t("2026-03-10T13:00")
    p = Pipeline(cfg, clock=SimulatedClock(t0), notifiers=recs, actions=[])
    p.send([alert("Down", tier="P0", start=t0)], now=t0)
    p.tick(t0)
    (n,) = recs["sms"].sent
    assert n.step == 1 and any("carol" in x and "+1555003" in x for x in n.notes)


def test_a_pack_rule_takes_keep_firing_for_and_a_resolve_threshold_by_override() -> None:
    from inferwatch.rules import load_rules

    cfg = parse_config("rules: {overrides: {FeatureDriftRollback: "
                       "{keep_firing_for: 10m, resolve_threshold: 0.4}}}")
    (rule,) = [r for r in load_rules(cfg) if r.name == "FeatureDriftRollback"]
    assert (rule.keep_firing_for, rule.resolve_threshold) == (600.0, 0.4)
    with pytest.raises(ConfigError, match="clear side"):
        load_rules(parse_config("rules: {overrides: {FeatureDriftRollback: {resolve_threshold: 0.9}}}"))


@pytest.mark.parametrize(("yaml", "message"), [
    ("alerting: {route: {receiver: terminal, routes: [{receiver: phone, escalation: nope}]}}",
     "unknown escalations"),
    ("alerting: {escalations: [{name: a, steps: [{after: 5m, notify: [phone]}, "
     "{after: 1m, notify: [phone]}]}]}",
     "in order of 'after'"),
    ("alerting: {escalations: [{name: a, steps: [{notify: [nobody]}]}]}", "unknown receiver 'nobody'"),
    ("alerting: {escalations: [{name: a, steps: [{notify: ['schedule:x/y']}]}]}", "unknown schedule layer"),
    ("alerting: {oncall: {schedules: [{name: s, timezone: Mars/Base, "
     "layers: [{name: p, members: [{name: a}]}]}]}}",
     "unknown time zone"),
    ("rules: {rules: [{name: X, dimension: service, tier: P1, signal: {type: metric, metric: m}, "
     "threshold: 100, resolve_threshold: 120}]}", "clear side of threshold 100"),
])
def test_bad_on_call_config_is_a_clear_error(yaml: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(yaml)


def test_the_evaluator_reports_newly_pending_alerts_into_the_history() -> None:
    # rule: a rule with `for` is pending first; the evaluator says so once, the pipeline records it
    from inferwatch.rules import Evaluator, load_rules
    from inferwatch.store import MemoryStore

    cfg = parse_config("rules: {default_pack: false, rules: [{name: Warming, dimension: service, tier: P2, "
                       "signal: {type: expr, expr: 'vector(1)'}, threshold: 0, for: 5m}]}")
    p, _ = make()
    ev = Evaluator(load_rules(cfg), MemoryStore(), clock=SimulatedClock(0), sink=p)
    ev.on_pending = p.pending
    for t in (0.0, 60.0, 120.0):
        ev.evaluate(t)
    (e,) = p.oncall.history.query(kinds=("pending",))
    assert e.t == 0.0 and e.labels["alertname"] == "Warming" and e.fingerprint


def test_the_oncall_verb_shows_now_and_next_from_the_config(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    cfg = tmp_path / "c.yml"
    cfg.write_text(SCHEDULE)
    argv = [sys.executable, "-m", "inferwatch", "oncall", "--config", str(cfg),
            "--at", "2026-03-10T17:00:00Z"]
    table = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert table.returncode == 0, table.stderr
    assert "ml/primary" in table.stdout and "carol (override)" in table.stdout  # 13:00 in New York
    out = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=60, check=False)
    rows = json.loads(out.stdout)["shifts"]
    assert [(r["layer"], r["now"]["member"], r["next"]["member"]) for r in rows] == [
        ("primary", "carol", "bob"), ("secondary", "alice", "bob")]
    bad = subprocess.run([*argv[:-1], "yesterday"], capture_output=True, text=True, timeout=60, check=False)
    assert bad.returncode != 0 and "--at" in bad.stderr and "Traceback" not in bad.stderr
