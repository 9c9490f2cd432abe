"""Timeline tests of grouping, inhibition, silences, dedup and retries (simulated time)."""

from __future__ import annotations

import random

import pytest

from alerting.conftest import alert
from inferwatch._exceptions import NotifyError
from inferwatch.alerting import AlertGroup, Notification, Pipeline, RecordingNotifier, Silence, StateDB
from inferwatch.alerting._delivery import InlineExecutor, RateWindow, ReceiverQueue, RetryPolicy
from inferwatch.alerting._outbox import Outbox
from inferwatch.config import parse_config
from inferwatch.model import Labels, SimulatedClock


def make(yaml: str = "", db: StateDB | None = None) -> tuple[Pipeline, dict[str, RecordingNotifier]]:
    cfg = parse_config(yaml).alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    p = Pipeline(cfg, db=db, clock=SimulatedClock(0), notifiers=recs, actions=[], rng=random.Random(1))
    return p, recs


def test_instances_of_one_service_are_one_notification_after_group_wait() -> None:
    # rule: group_by [alertname, service]; group_wait 30s collects the instances
    p, recs = make()
    p.send([alert(instance=f"i{i}:9000") for i in range(5)], now=0)
    p.tick(29)
    assert recs["wecom"].sent == []
    p.tick(30)
    (n,) = recs["wecom"].sent
    assert len(n.groups) == 1 and len(n.alerts) == 5
    assert n.groups[0].labels == {"alertname": "HighLatency", "service": "ranker"}


def test_group_interval_sends_new_alert_and_repeat_interval_resends() -> None:
    # rules: a new alert waits for group_interval; nothing new waits for repeat_interval
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 10s, group_interval: 1m, "
                   "repeat_interval: 5m}}")
    p.send([alert(instance="a")], now=0)
    p.tick(10)
    assert len(recs["terminal"].sent) == 1
    p.send([alert(instance="a"), alert(instance="b")], now=20)
    p.tick(69)
    assert len(recs["terminal"].sent) == 1
    p.tick(70)
    assert len(recs["terminal"].sent[-1].alerts) == 2
    for t in range(130, 371, 60):
        p.send([alert(instance="a"), alert(instance="b")], now=t)
        p.tick(t)
    assert len(recs["terminal"].sent) == 3  # repeat due at 70 + 300 = 370


def test_resolved_is_sent_once_then_group_dropped() -> None:
    # rule: send_resolved (default true) notifies the resolution once
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s, group_interval: 1m}}")
    p.send([alert()], now=0)
    p.send([alert(end=50)], now=50)
    p.tick(60)
    assert [n.groups[0].status for n in recs["terminal"].sent] == ["firing", "resolved"]
    p.tick(120)
    assert len(recs["terminal"].sent) == 2 and not p.dispatcher.groups


def test_critical_inhibits_warning_of_same_alertname() -> None:
    # rule: default inhibition severity=critical mutes severity=warning with equal alertname
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s, group_by: ['...']}}")
    p.send([alert("DiskFull", severity="critical", tier="P0", dimension="infrastructure"),
            alert("DiskFull", severity="warning", tier="P2", dimension="infrastructure", instance="x")],
           now=0)
    sent = [a.labels["severity"] for n in recs["terminal"].sent for a in n.alerts]
    assert sent == ["critical"]


def test_p0_outage_inhibits_latency_of_that_service_only() -> None:
    # rule: a firing P0 of a service mutes that service's P1/P2 service-dimension alerts
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s}}")
    p.send([alert("ServiceUnavailable", tier="P0", severity="critical"),
            alert("HighLatency"), alert("HighLatency", service="other")], now=0)
    got = sorted((a.name, a.labels["service"]) for n in recs["terminal"].sent for a in n.alerts)
    assert got == [("HighLatency", "other"), ("ServiceUnavailable", "ranker")]


def test_silence_mutes_until_it_ends_and_expire_early_unmutes() -> None:
    # rule: an active silence mutes matching alerts; expiring it lets the next flush send
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s, group_interval: 1m}}")
    s = p.silences.add(Silence.new('service="ranker"', 0, 3600, "ops", "deploy"), now=0)
    p.send([alert()], now=0)
    p.tick(60)
    assert recs["terminal"].sent == []
    p.silences.expire(s.id, now=90)
    p.tick(120)
    assert len(recs["terminal"].sent) == 1


def test_retryable_failures_back_off_then_give_up_naming_the_receiver() -> None:
    # rule: retryable errors are retried with backoff up to max_attempts, then given up
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s}, "
                   "receivers: [{name: terminal, type: terminal, max_attempts: 3}]}")
    err = NotifyError("errcode 45009: api freq out of limit", retryable=True)
    recs["terminal"].fail_next(err, err, err)
    p.send([alert()], now=0)
    for t in range(1, 20):
        p.tick(t)
    (rec,) = [r for r in p.records.recent() if r.status == "failed"]
    assert rec.error == "recorder[terminal]: gave up after 3 attempts: errcode 45009: api freq out of limit"


def test_retry_succeeds_after_transient_failure() -> None:
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s}}")
    recs["terminal"].fail_next(NotifyError("HTTP 503", retryable=True))
    p.send([alert()], now=0)
    assert recs["terminal"].sent == []
    p.tick(2)
    assert len(recs["terminal"].sent) == 1


def test_restart_never_resends_and_sends_what_is_owed(tmp_path: pytest.TempPathFactory) -> None:
    # rule: the notification log and alerts live in SQLite across restarts
    path = f"{tmp_path}/alerting.db"
    cfg = "alerting: {route: {receiver: terminal, group_wait: 30s, group_interval: 5m}}"
    p, _ = make(cfg, StateDB(path))
    p.send([alert(instance="a")], now=0)
    p.tick(30)
    p.send([alert(instance="a"), alert(instance="b")], now=40)  # b is owed at 330
    p.db.close()
    p2, recs2 = make(cfg, StateDB(path))
    p2.tick(100)
    assert [len(n.alerts) for n in recs2["terminal"].sent] == [2]  # b sent, a not sent again alone
    p2.tick(400)  # not resent within resolve_timeout (5m): resolved, sent once
    assert [n.groups[0].status for n in recs2["terminal"].sent] == ["firing", "resolved"]


def test_continue_sends_to_both_routes() -> None:
    # rule: continue: true lets the following sibling match too
    p, recs = make("alerting: {route: {receiver: terminal, group_wait: 0s, routes: ["
                   "{matchers: ['tier=\"P1\"'], receiver: wecom, continue: true},"
                   "{matchers: ['service=\"ranker\"'], receiver: phone}]}}")
    p.send([alert()], now=0)
    assert len(recs["wecom"].sent) == 1 and len(recs["phone"].sent) == 1 and not recs["terminal"].sent


def test_default_routes_by_tier_and_p2_goes_to_digest() -> None:
    p, recs = make()
    p.send([alert("Down", tier="P0", severity="critical", service="a"), alert("Slow", service="b"),
            alert("Drift", tier="P2", severity="warning", dimension="quality", service="c")], now=0)
    p.tick(30)
    assert [n.alerts[0].name for n in recs["phone"].sent] == ["Down"]
    assert [n.alerts[0].name for n in recs["wecom"].sent] == ["Slow"]
    assert recs["terminal"].sent == [] and p.digests["digest"].pending() == 1


def test_digest_delivered_at_local_time_grouped_by_dimension() -> None:
    # rule: P2 gathered into a digest at 09:00 Asia/Shanghai (01:00 UTC)
    p, recs = make("alerting: {receivers: [{name: digest, type: digest, timezone: Asia/Shanghai}]}")
    p.send([alert("CpuHigh", tier="P2", severity="warning", dimension="infrastructure", end=400)], now=400)
    for t in range(0, 3600, 60):  # the evaluator resends firing alerts every evaluation
        p.send([alert("Drift", tier="P2", severity="warning", dimension="quality", value=0.13)], now=t)
    p.tick(3599)
    assert recs["terminal"].sent == []
    p.tick(3600)  # 1970-01-01 09:00 +08:00
    (n,) = recs["terminal"].sent
    assert n.kind == "digest" and [g.labels["dimension"] for g in n.groups] == ["infrastructure", "quality"]
    text = "\n".join(n.notes)
    assert "last value 0.13, still active" in text and "resolved" in text
    assert p.digests["digest"].pending() == 1  # the active one carries over


class _Outcomes:
    """Delivery outcomes a queue reports (the pipeline's side, for a queue tested alone)."""

    def __init__(self) -> None:
        self.sent: list[Notification] = []

    def owed(self, n: Notification) -> bool:
        return True

    def delivered(self, n: Notification, now: float) -> None:
        self.sent.append(n)

    def gave_up(self, n: Notification, error: str, now: float) -> None:
        raise AssertionError(error)

    def sender(self) -> str:
        return ""

    def attempted(self, receiver: str, error: str | None, now: float) -> None:
        pass


def test_rate_limit_merges_a_storm_instead_of_dropping() -> None:
    # rule: WeCom allows 20 messages a minute; the excess is merged into one message
    rec, outbox, outcomes = RecordingNotifier("wecom"), Outbox(StateDB(":memory:")), _Outcomes()
    q = ReceiverQueue("wecom", rec, outbox, RetryPolicy(3, 1, 60, 0, 30), outcomes, InlineExecutor(),
                      random.Random(1), RateWindow(20, 60))
    for i in range(50):
        outbox.put(_n(i), 0, q.busy())
        q.tick(0)
    assert len(rec.sent) == 20 and q.stats(0).length == 30
    q.tick(30)
    assert len(rec.sent) == 20
    q.tick(61)
    assert len(rec.sent) == 21 and len(rec.sent[-1].groups) == 30 and q.stats(61).length == 0
    assert len(outcomes.sent) == 21


def _n(i: int) -> Notification:
    a = alert(instance=str(i))
    return Notification("wecom", (AlertGroup(f"g{i}", Labels({"i": str(i)}), (a,), 0.0),))


def test_digest_entries_survive_a_restart(tmp_path: pytest.TempPathFactory) -> None:
    # rule: what the digest owes is in SQLite; a restart before 09:00 still delivers it
    path = f"{tmp_path}/alerting.db"
    p, _ = make("", StateDB(path))
    p.send([alert("Drift", tier="P2", severity="warning", dimension="quality", end=100)], now=0)
    p.tick(30)
    p.db.close()
    p2, recs = make("", StateDB(path))
    p2.tick(9 * 3600)
    (n,) = recs["terminal"].sent
    assert n.kind == "digest" and "Drift" in "\n".join(n.notes)
