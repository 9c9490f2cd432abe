"""Each receiver against its loopback fake, which checks requests as the service documents them."""

from __future__ import annotations

import io
import json
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from alerting.conftest import alert
from alerting.fakes import (
    PD_KEY,
    FakeService,
    Handler,
    pagerduty_handler,
    slack_handler,
    twilio_handler,
    webhook_handler,
    wecom_handler,
)
from inferwatch._exceptions import NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification, Pipeline
from inferwatch.alerting.notify import build_notifier
from inferwatch.config import (
    EmailReceiverSpec,
    PagerDutyReceiverSpec,
    SlackReceiverSpec,
    TwilioReceiverSpec,
    WebhookReceiverSpec,
    WeComReceiverSpec,
    parse_config,
)
from inferwatch.model import Labels

Fake = Callable[[Handler], FakeService]
KEY = "SECRET-ROBOT-KEY"


def note(*alerts_, now: float = 10.0) -> Notification:  # type: ignore[no-untyped-def]
    g = AlertGroup('{}:{alertname="HighLatency",service="ranker"}',
                   Labels({"alertname": "HighLatency", "service": "ranker"}), tuple(alerts_), now)
    return Notification("ops", (g,))


def test_wecom_markdown_and_errcodes(fake: Fake) -> None:
    svc = fake(wecom_handler(KEY))
    n = build_notifier(WeComReceiverSpec(name="ops", key=KEY, url=svc.url), HttpClient(), "http://dash", None)
    n.notify(note(alert(instance="a")))
    body = svc.requests[0].json()
    assert body["msgtype"] == "markdown" and "HighLatency" in body["markdown"]["content"]
    # HTTP 200 with errcode 45009 is a retryable failure; the key never shows in the error
    svc.replies.append((200, {"Content-Type": "application/json"},
                        b'{"errcode":45009,"errmsg":"api freq out of limit"}'))
    with pytest.raises(NotifyError) as e:
        n.notify(note(alert()))
    assert e.value.retryable and "45009" in str(e.value) and KEY not in str(e.value)
    # a wrong key (93000) is final
    bad = build_notifier(WeComReceiverSpec(name="ops", key="wrong", url=svc.url), HttpClient(), "", None)
    with pytest.raises(NotifyError) as e2:
        bad.notify(note(alert()))
    assert not e2.value.retryable


def test_wecom_cuts_long_messages_with_a_dashboard_pointer(fake: Fake) -> None:
    # rule: content at most 4096 bytes (the fake rejects longer with errcode 40058)
    svc = fake(wecom_handler(KEY))
    n = build_notifier(WeComReceiverSpec(name="ops", key=KEY, url=svc.url), HttpClient(), "http://dash", None)
    n.notify(note(*[alert(instance=f"实例-{i:04d}.example:9000") for i in range(300)]))
    content = svc.requests[0].json()["markdown"]["content"]
    assert len(content.encode()) <= 4096 and content.endswith("[dashboard](http://dash)")
    lines = content.splitlines()
    shown = sum(1 for x in lines if x.startswith("- firing: "))
    assert lines[-2] == f"… {300 - shown} more alerts" and len(content.encode()) > 4096 - 120  # whole lines


def test_wecom_gives_up_naming_the_receiver_in_the_pipeline(fake: Fake) -> None:
    svc = fake(lambda r: (200, {}, b'{"errcode":45009,"errmsg":"api freq out of limit"}'))
    cfg = parse_config(f"alerting: {{route: {{receiver: wecom, group_wait: 0s}}, receivers: "
                       f"[{{name: wecom, type: wecom, key: {KEY}, url: '{svc.url}'}}]}}").alerting
    p = Pipeline(cfg, actions=[], rng=random.Random(0))
    p.send([alert()], now=0)
    for t in range(1, 40):
        p.tick(t)
    (rec,) = [r for r in p.records.recent() if r.status == "failed"]
    assert rec.error == "wecom[wecom]: gave up after 5 attempts: errcode 45009: api freq out of limit"
    assert len(svc.requests) == 5
    assert KEY not in json.dumps([r.to_json() for r in p.records.recent()])


def test_pagerduty_trigger_then_resolve_with_stable_dedup_key(fake: Fake) -> None:
    svc = fake(pagerduty_handler())
    spec = PagerDutyReceiverSpec(name="phone", routing_key=PD_KEY, url=svc.url)
    n = build_notifier(spec, HttpClient(), "", None)
    n.notify(note(alert(tier="P0", severity="critical")))
    n.notify(note(alert(tier="P0", severity="critical", end=5.0)))
    first, second = (r.json() for r in svc.requests)
    assert first["event_action"] == "trigger" and first["payload"]["severity"] == "critical"
    assert second["event_action"] == "resolve" and first["dedup_key"] == second["dedup_key"]
    # an acknowledgement changes the incident's state in place (the acknowledge event, no payload)
    n.notify(replace(note(alert(tier="P0")), notes=("Acknowledged by ops",), kind="acknowledged"))
    acked = svc.requests[-1].json()
    assert acked["event_action"] == "acknowledge" and acked["dedup_key"] == first["dedup_key"]
    assert "payload" not in acked
    svc.replies.append((429, {}, b'{"status":"throttle event"}'))
    with pytest.raises(NotifyError) as e:
        n.notify(note(alert()))
    assert e.value.retryable
    svc.replies.append((400, {}, b'{"status":"invalid event"}'))
    with pytest.raises(NotifyError) as e2:
        n.notify(note(alert()))
    assert not e2.value.retryable


def test_twilio_places_a_call_per_number_with_basic_auth(fake: Fake) -> None:
    svc = fake(twilio_handler("AC123", "tok"))
    spec = TwilioReceiverSpec(name="phone", account_sid="AC123", auth_token="tok", **{"from": "+15550001"},
                              to=("+15550002", "+15550003"), url=svc.url)
    n = build_notifier(spec, HttpClient(), "", None)
    n.notify(note(alert(tier="P0")))
    assert [r.form()["To"] for r in svc.requests] == [["+15550002"], ["+15550003"]]
    assert "HighLatency" in svc.requests[0].form()["Twiml"][0]
    n.notify(note(alert(end=1.0)))  # a resolution does not call
    assert len(svc.requests) == 2


def test_slack_ok_and_invalid_payload_is_final(fake: Fake) -> None:
    svc = fake(slack_handler("/services/T/B/X"))
    spec = SlackReceiverSpec(name="s", webhook_url=f"{svc.url}/services/T/B/X")
    n = build_notifier(spec, HttpClient(), "", None)
    n.notify(note(alert()))
    assert "HighLatency" in svc.requests[0].json()["text"]
    svc.replies.append((400, {}, b"invalid_payload"))
    with pytest.raises(NotifyError) as e:
        n.notify(note(alert()))
    assert not e.value.retryable and "invalid_payload" in str(e.value) and "/services/" not in str(e.value)


def test_webhook_posts_alertmanager_version_4(fake: Fake) -> None:
    svc = fake(webhook_handler())
    spec = WebhookReceiverSpec(name="hook", url=svc.url + "/hook", bearer_token="bt", max_alerts=2)
    n = build_notifier(spec, HttpClient(), "http://dash", None)
    n.notify(note(alert(instance="a"), alert(instance="b"), alert(instance="c")))
    (req,) = svc.requests
    b = req.json()
    assert b["version"] == "4" and b["truncatedAlerts"] == 1 and len(b["alerts"]) == 2
    assert b["alerts"][0]["endsAt"] == "0001-01-01T00:00:00Z" and req.headers["authorization"] == "Bearer bt"


@pytest.fixture
def smtp() -> Iterator[tuple[int, list[bytes]]]:
    from aiosmtpd.controller import Controller

    got: list[bytes] = []
    done = threading.Event()

    class H:
        async def handle_DATA(self, server, session, envelope):  # type: ignore[no-untyped-def]
            got.append(envelope.content)
            done.set()
            return "250 OK"

    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    c = Controller(H(), hostname="127.0.0.1", port=port)
    c.start()
    yield port, got
    c.stop()


def test_email_over_smtp(smtp: tuple[int, list[bytes]]) -> None:
    port, got = smtp
    spec = EmailReceiverSpec(name="mail", smarthost=f"127.0.0.1:{port}", to=("oncall@example.com",),
                             starttls=False)
    build_notifier(spec, HttpClient(), "", None).notify(note(alert()))
    assert b"Subject: [FIRING:1] [P1] HighLatency service=ranker" in got[0]


def test_missing_credentials_fall_back_to_terminal_and_say_so_once() -> None:
    out, warned = io.StringIO(), []
    n = build_notifier(WeComReceiverSpec(name="wecom"), HttpClient(), "", out, warned.append)
    n.notify(note(alert()))
    n.notify(note(alert()))
    assert len(warned) == 1 and out.getvalue().count("HighLatency") >= 2
    assert warned[0].startswith("wecom[wecom]: no credentials: needs key;")


def test_only_a_missing_credential_falls_back_other_errors_surface() -> None:
    # rule: no catch-all rewrite of constructor errors; a spec that skipped validation is a bug
    spec = EmailReceiverSpec.model_construct(name="m", smarthost="nohost:smtp", to=("a@example.com",))
    with pytest.raises(ValueError, match="invalid literal"):
        build_notifier(spec, HttpClient(), "", io.StringIO())


def test_wecom_storm_is_merged_within_20_a_minute(fake: Fake) -> None:
    # rule: at most 20 messages a minute per robot; the excess waits and goes out merged, none dropped
    now = [0.0]
    svc = fake(wecom_handler(KEY, clock=lambda: now[0]))  # refuses a 21st message within a minute
    cfg = parse_config("alerting: {route: {receiver: wecom, group_wait: 0s, group_by: ['...']}, receivers: "
                       f"[{{name: wecom, type: wecom, key: {KEY}, url: '{svc.url}'}}]}}").alerting
    p = Pipeline(cfg, actions=[], rng=random.Random(0))
    p.send([alert(instance=f"i{i}") for i in range(50)], now=0)
    assert len(svc.requests) == 20
    now[0] = 30
    p.tick(30)
    assert len(svc.requests) == 20
    now[0] = 61
    p.tick(61)
    assert len(svc.requests) == 21 and not any(r.status == "failed" for r in p.records.recent())
    merged = svc.requests[-1].json()["markdown"]["content"]
    # 30 groups in one message: cut at 4096 bytes with the pointer, the first held group first
    assert merged.count("[FIRING:1]") >= 10 and len(merged.encode()) <= 4096
    assert merged.endswith(" more alerts")  # no dashboard URL configured: the count ends it
    sent = [a for r in p.records.recent() if r.status == "sent" for g in r.groups for a in g["alerts"]]
    assert len(sent) == 50


def test_runner_delivers_on_real_time() -> None:
    from inferwatch.alerting import PipelineRunner
    from inferwatch.model import SystemClock

    cfg = parse_config("alerting: {route: {receiver: terminal, group_wait: 0s}}").alerting
    from inferwatch.alerting import RecordingNotifier

    rec = RecordingNotifier("terminal")
    p = Pipeline(cfg, clock=SystemClock(), notifiers={"terminal": rec}, actions=[])
    runner = PipelineRunner(p)
    runner.start()
    try:
        now = SystemClock().now()
        p.dispatcher.put([alert(start=now)], now)  # no send(): the flush must come from the runner
        assert rec.delivered.wait(60)
    finally:
        runner.stop()
    assert len(rec.sent) == 1
