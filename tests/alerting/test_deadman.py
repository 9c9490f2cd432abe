"""Issue 48 #5: the dead man's switch, both ways, on the simulated clock.

The Watchdog reaches each service's loopback fake in the request shape the service
documents (healthchecks.io ping, PagerDuty Events v2, Opsgenie heartbeat ping, an
Alertmanager webhook); failures are counted and logged without secrets; the watch pages
once for a heartbeat that goes quiet and resolves when it returns.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from alerting.fakes import (
    HC_UUID,
    PD_KEY,
    FakeService,
    healthchecks_handler,
    opsgenie_heartbeat_handler,
    pagerduty_handler,
    webhook_handler,
)
from inferwatch._exceptions import ConfigError
from inferwatch.alerting.deadman import (
    PAGERDUTY_EVENTS_URL,
    HeartbeatSender,
    HeartbeatTarget,
    HeartbeatWatch,
    resolve_target,
)
from inferwatch.config import HeartbeatSenderSpec, HeartbeatWatchSpec, Secret, parse_config
from inferwatch.model import SimulatedClock
from inferwatch.rules import Alert
from inferwatch.server.api._heartbeats_api import carries_watchdog

GENIE_KEY = "eb243592-faa2-4ba2-a551q-1afdf565c889"


@pytest.fixture
def fake() -> Iterator[list[FakeService]]:
    started: list[FakeService] = []
    yield started
    for f in started:
        f.stop()


def _start(fake: list[FakeService], handler: object) -> FakeService:
    svc = FakeService(handler).start()  # type: ignore[arg-type]
    fake.append(svc)
    return svc


def _sender(target: HeartbeatTarget, clock: SimulatedClock, **kw: object) -> HeartbeatSender:
    return HeartbeatSender(target, clock=clock, interval=60.0, source="site-a", timeout=5.0,
                           **kw)  # type: ignore[arg-type]


def test_each_kind_reaches_its_fake_every_interval_as_documented(fake: list[FakeService]) -> None:
    hc = _start(fake, healthchecks_handler())
    genie = _start(fake, opsgenie_heartbeat_handler("inferwatch", GENIE_KEY))
    pd = _start(fake, pagerduty_handler())
    hook = _start(fake, webhook_handler())
    clock = SimulatedClock(1_700_000_000.0)
    senders = [
        _sender(HeartbeatTarget("healthchecks", Secret(f"{hc.url}/{HC_UUID}")), clock),
        _sender(HeartbeatTarget("opsgenie", Secret(f"{genie.url}/v2/heartbeats/inferwatch/ping"),
                                Secret(GENIE_KEY)), clock),
        _sender(HeartbeatTarget("pagerduty", Secret(f"{pd.url}/v2/enqueue"), Secret(PD_KEY)), clock),
        _sender(HeartbeatTarget("webhook", Secret(f"{hook.url}/hook"), Secret("tok")), clock),
    ]
    for _ in range(3):  # three intervals: one request each, every one accepted (2xx)
        assert [s.send_once(clock.now()) for s in senders] == [True] * 4
        clock.advance(60)
    assert [len(f.requests) for f in (hc, genie, pd, hook)] == [3, 3, 3, 3]
    assert all(s.failures == 0 and s.sent == 3 for s in senders)
    ping = hc.requests[0]
    assert ping.method == "POST"
    assert ping.body.startswith(b"Watchdog from inferwatch on site-a at 2023-11-14T22:13")
    assert genie.requests[0].method == "POST" and genie.requests[0].body == b""
    event = pd.requests[0].json()
    assert event["event_action"] == "trigger" and event["dedup_key"] == "inferwatch-watchdog-site-a"
    assert {r.json()["dedup_key"] for r in pd.requests} == {"inferwatch-watchdog-site-a"}  # one alert
    assert event["payload"]["severity"] == "info" and event["payload"]["source"] == "site-a"
    body = hook.requests[2].json()
    assert hook.requests[2].headers["authorization"] == "Bearer tok"
    (alert,) = body["alerts"]
    assert body["status"] == "firing" and alert["labels"]["alertname"] == "Watchdog"
    assert alert["endsAt"] == "0001-01-01T00:00:00Z"  # always firing: no end
    assert alert["startsAt"] == "2023-11-14T22:13:20.000Z"  # since the sender started, at every send


def test_failures_are_counted_in_a_row_and_logged_without_the_key(
        fake: list[FakeService], caplog: pytest.LogCaptureFixture) -> None:
    genie = _start(fake, opsgenie_heartbeat_handler("inferwatch", "the-right-key"))
    clock = SimulatedClock(0.0)
    wrong = "wrong-key-0123456789"
    s = _sender(HeartbeatTarget("opsgenie", Secret(f"{genie.url}/v2/heartbeats/inferwatch/ping"),
                                Secret(wrong)), clock)
    with caplog.at_level(logging.WARNING):
        assert [s.send_once(float(t)) for t in range(3)] == [False, False, False]
    assert (s.sent, s.failures, s.failing_in_a_row) == (3, 3, 3)
    assert len([r for r in caplog.records if "heartbeat (opsgenie) failed" in r.getMessage()]) == 1  # once
    assert wrong not in caplog.text and "401" in caplog.text
    s.target = HeartbeatTarget("opsgenie", s.target.url, Secret("the-right-key"))
    assert s.send_once(4.0) is True
    assert (s.failures, s.failing_in_a_row) == (3, 0)


def test_should_send_false_sends_nothing(fake: list[FakeService]) -> None:
    hook = _start(fake, webhook_handler())
    leader = [False]
    s = _sender(HeartbeatTarget("webhook", Secret(f"{hook.url}/h")), SimulatedClock(0.0),
                should_send=lambda: leader[0])
    assert s.send_once(0.0) is None and hook.requests == [] and s.sent == 0
    leader[0] = True
    assert s.send_once(60.0) is True and len(hook.requests) == 1


def test_secrets_come_from_the_environment_then_files_then_the_config(tmp_path: Path) -> None:
    key_file = tmp_path / "key"
    key_file.write_text("from-file\n")
    spec = HeartbeatSenderSpec(kind="pagerduty", key_file=str(key_file))
    t = resolve_target(spec, environ={})
    assert t.url.reveal() == PAGERDUTY_EVENTS_URL and t.key is not None and t.key.reveal() == "from-file"
    t = resolve_target(spec, environ={"INFERWATCH_HEARTBEAT_KEY": "from-env"})
    assert t.key is not None and t.key.reveal() == "from-env"
    with pytest.raises(ConfigError, match=r"alerting.heartbeat \(opsgenie\): no credentials: needs key"):
        resolve_target(HeartbeatSenderSpec(kind="opsgenie", url=Secret("https://api.opsgenie.com/v2/x")),
                       environ={})
    with pytest.raises(ConfigError, match="no url"):
        resolve_target(HeartbeatSenderSpec(kind="healthchecks"), environ={})
    with pytest.raises(ConfigError, match="key_file: cannot read"):
        resolve_target(HeartbeatSenderSpec(kind="webhook", url=Secret("http://x/y"),
                                           key_file=str(tmp_path / "none")), environ={})
    shown = repr(parse_config("alerting: {heartbeat: {kind: webhook, url: 'http://h/secret-path'}}"))
    assert "secret-path" not in shown  # a Secret prints as <secret>


@pytest.mark.parametrize(("text", "error"), [
    ("heartbeats: [{name: a, expect_every: 1m, missing_after: 1m}]", "must be longer than expect_every"),
    ("heartbeats: [{name: a}, {name: a}]", "listed twice"),
    ("heartbeats: [{name: 'a/b'}]", "URL path segment"),
    ("alerting: {heartbeat: {url: 'http://x', url_file: f}}", "not both"),
    ("alerting: {heartbeat: {kind: statuspage}}", "kind"),
])
def test_bad_config_is_refused_naming_the_field(text: str, error: str) -> None:
    with pytest.raises(ConfigError, match=error):
        parse_config(text)


class _Sink:
    def __init__(self) -> None:
        self.sent: list[Alert] = []

    def __call__(self, alerts: Sequence[Alert], now: float) -> None:
        self.sent.extend(alerts)


def test_a_heartbeat_that_goes_quiet_fires_then_resolves_when_it_returns() -> None:
    clock, sink = SimulatedClock(1000.0), _Sink()
    w = HeartbeatWatch([HeartbeatWatchSpec(name="site-a", expect_every=60, missing_after=180,
                                           labels={"tier": "P1"})], clock, sink)
    for t in (1010.0, 1070.0, 1130.0):  # on time: nothing
        w.beat("site-a", t)
        assert w.check(t + 59) == []
    assert w.check(1130 + 179.9) == []  # one late heartbeat (within missing_after) does not page
    (a,) = w.check(1130 + 181)
    assert a.labels["alertname"] == "HeartbeatMissing" and a.labels["heartbeat"] == "site-a"
    assert a.labels["tier"] == "P1" and a.ends_at is None and a.starts_at == 1130 + 180
    text = a.annotations["description"]
    assert "Expected every 1m" in text and "3 received" in text
    (again,) = w.check(1130 + 200)  # refreshed while missing: the same alert (one group, one message)
    assert again.labels == a.labels and again.starts_at == a.starts_at
    assert w.beat("site-a", 1400.0) is True
    resolved = sink.sent[-1]
    assert resolved.labels == a.labels and resolved.ends_at == 1400.0
    assert w.check(1401.0) == [] and w.beat("nobody", 1401.0) is False


def test_a_heartbeat_never_heard_fires_missing_after_the_start() -> None:
    clock, sink = SimulatedClock(0.0), _Sink()
    w = HeartbeatWatch([HeartbeatWatchSpec(name="b", expect_every=10, missing_after=30)], clock, sink)
    assert w.check(29.0) == []
    (a,) = w.check(31.0)
    assert a.labels["tier"] == "P0"
    assert "none arrived since this server started" in a.annotations["description"]
    assert w.every() == 3.0  # a tenth of the shortest missing_after, at least 1 s


@pytest.mark.parametrize(("body", "counts"), [
    (b"", True),  # curl -X POST
    (b"Watchdog from inferwatch on a", True),  # a healthchecks-style ping with a log line
    (b'{"version":"4","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"Watchdog"}}]}',
     True),
    (b'{"version":"4","status":"resolved","alerts":[{"status":"resolved","labels":{"alertname":"Watchdog"}}]}',
     False),  # a resolved Watchdog says nothing of life
    (b'{"version":"4","alerts":[{"status":"firing","labels":{"alertname":"TargetDown"}}]}', False),
])
def test_what_counts_as_a_heartbeat(body: bytes, counts: bool) -> None:
    assert carries_watchdog(body) is counts


def test_through_the_pipeline_one_page_then_one_resolved_message() -> None:
    import random

    from inferwatch.alerting import Pipeline, RecordingNotifier

    cfg = parse_config("alerting: {route: {receiver: phone, group_wait: 30s, group_interval: 5m}}").alerting
    rec = RecordingNotifier("phone")
    p = Pipeline(cfg, notifiers={r.name: rec for r in cfg.effective_receivers()}, rng=random.Random(0))
    clock = SimulatedClock(0.0)
    w = HeartbeatWatch([HeartbeatWatchSpec(name="site-a")], clock, p.send)  # every 1m, missing after 3m
    for t in range(0, 3601, 15):  # beats until 10 minutes, then quiet for 40, back at 50
        if t % 60 == 0 and (t <= 600 or t >= 3000):
            w.beat("site-a", float(t))
        w.check(float(t))
        p.tick(float(t))
    statuses = [(g.status, g.alerts[0].labels["heartbeat"]) for n in rec.sent for g in n.groups]
    assert statuses == [("firing", "site-a"), ("resolved", "site-a")]  # once, then its resolution
    p.close()


def test_the_loop_sends_on_every_interval_of_the_clock(fake: list[FakeService]) -> None:
    import threading

    hook = _start(fake, webhook_handler())
    clock = SimulatedClock(0.0)
    asked: list[float] = []
    six = threading.Event()

    def should_send() -> bool:  # also the probe: when the loop asks, on the simulated clock
        asked.append(clock.now())
        if len(asked) >= 6:
            six.set()
        return len(asked) <= 5  # five sends, then this replica loses the lease

    s = _sender(HeartbeatTarget("webhook", Secret(f"{hook.url}/h")), clock, should_send=should_send)
    s.start()
    assert six.wait(60)
    s.stop()
    assert asked[:6] == [0.0, 60.0, 120.0, 180.0, 240.0, 300.0]
    assert s.sent == 5 and len(hook.requests) == 5
