"""Receivers exactly as the services document them; each fake refuses what the service would."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alerting.conftest import alert
from alerting.fakes import (
    PD_KEY,
    FakeService,
    Handler,
    echo_handler,
    pagerduty_handler,
    slack_handler,
    twilio_handler,
    webhook_handler,
    wecom_handler,
)
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify import build_notifier
from inferwatch.config import (
    PagerDutyReceiverSpec,
    SlackReceiverSpec,
    TwilioReceiverSpec,
    WebhookReceiverSpec,
    WeComReceiverSpec,
    parse_config,
)
from inferwatch.model import Labels, SimulatedClock, alertmanager_fingerprint
from inferwatch.rules import Alert

Fake = Callable[[Handler], FakeService]
KEY = "SECRET-ROBOT-KEY"


def note(*alerts_: Alert, now: float = 10.0, key: str = "{}:{alertname=\"HighLatency\"}") -> Notification:
    g = AlertGroup(key, Labels({"alertname": "HighLatency"}), tuple(alerts_), now)
    return Notification("ops", (g,))


def many_groups(n: int) -> Notification:
    groups = tuple(AlertGroup(f"{{}}:{{i=\"{i}\"}}", Labels({"alertname": "HighLatency", "i": str(i)}),
                              (alert(instance=f"host-{i}.example.com:9000"),), 10.0) for i in range(n))
    return Notification("ops", groups)


# -- WeCom ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("users", "mobiles", "msgtype", "pinged"), [
    # markdown can mention user ids only, as <@userid> in the content
    (("zhangsan",), (), "markdown", {"user:zhangsan"}),
    # a phone number can be mentioned only through text's mentioned_mobile_list
    ((), ("13800001111",), "text", {"mobile:13800001111"}),
    # @all is text-only too, and must reach the list unchanged (not "<@@all>")
    (("@all",), (), "text", {"@all"}),
    (("lisi",), ("@all",), "text", {"user:lisi", "@all"}),
])
def test_wecom_mentions_ping_as_the_api_defines_them(
        fake: Fake, users: tuple[str, ...], mobiles: tuple[str, ...], msgtype: str, pinged: set[str]) -> None:
    robot = wecom_handler(KEY)
    svc = fake(robot)
    spec = WeComReceiverSpec(name="ops", key=KEY, url=svc.url, mentioned_list=users,
                             mentioned_mobile_list=mobiles)
    build_notifier(spec, HttpClient(), "", None).notify(note(alert()))
    assert svc.requests[0].json()["msgtype"] == msgtype
    assert robot.pings == [pinged]


def test_wecom_label_cannot_mention_and_mentions_survive_the_cut(fake: Fake) -> None:
    robot = wecom_handler(KEY)
    svc = fake(robot)
    spec = WeComReceiverSpec(name="ops", key=KEY, url=svc.url, mentioned_list=("oncall",))
    # 300 alerts, one of them with a label that tries to ping the boss
    alerts = [alert(instance=f"实例-{i:04d}.example:9000") for i in range(300)] + [alert(owner="<@boss>")]
    build_notifier(spec, HttpClient(), "", None).notify(note(*alerts))
    content = svc.requests[0].json()["markdown"]["content"]
    assert len(content.encode()) <= 4096 and content.endswith("<@oncall>")
    assert robot.pings == [{"user:oncall"}]


def test_wecom_text_is_cut_at_2048_bytes(fake: Fake) -> None:
    robot = wecom_handler(KEY)
    svc = fake(robot)
    spec = WeComReceiverSpec(name="ops", key=KEY, url=svc.url, mentioned_mobile_list=("+8613800001111",))
    build_notifier(spec, HttpClient(), "", None).notify(note(*[alert(instance=f"i{i}") for i in range(200)]))
    text = svc.requests[0].json()["text"]
    assert 1900 < len(text["content"].encode()) <= 2048 and text["content"].endswith(" more alerts")
    assert robot.pings == [{"mobile:+8613800001111"}]


@pytest.mark.parametrize(("field", "value"), [
    ("mentioned_mobile_list", "[zhangsan]"),  # a user id where a phone number belongs
    ("mentioned_list", "['<@x>']"),
])
def test_wecom_mention_lists_are_checked_at_load(field: str, value: str) -> None:
    with pytest.raises(ConfigError, match=field):
        parse_config(f"alerting: {{receivers: [{{name: w, type: wecom, {field}: {value}}}]}}")


# -- Twilio ---------------------------------------------------------------------------------------

def test_twilio_twiml_stays_under_4000_characters(fake: Fake) -> None:
    svc = fake(twilio_handler("AC123", "tok"))
    spec = TwilioReceiverSpec(name="call", account_sid="AC123", auth_token="tok", **{"from": "+15550001"},
                              to=("+15550002",), url=svc.url)
    build_notifier(spec, HttpClient(), "", None).notify(many_groups(300))
    assert svc.got.wait(60) and len(svc.requests) == 1  # the fake accepted it (else 400, code 32018)
    twiml = svc.requests[0].form()["Twiml"][0]
    said = len(twiml.split(". [FIRING")) - 1
    assert len(twiml) <= 4000 and twiml.endswith(f" And {300 - said} more.</Say></Response>") and said > 10


def test_twilio_one_huge_title_is_cut_not_refused(fake: Fake) -> None:
    svc = fake(twilio_handler("AC123", "tok"))
    spec = TwilioReceiverSpec(name="call", account_sid="AC123", auth_token="tok", **{"from": "+15550001"},
                              to=("+15550002",), url=svc.url)
    huge = Labels({"alertname": "HighLatency", "detail": "<&>" * 3000})
    group = AlertGroup("g", huge, (Alert(huge, {}, 0.0),), 10.0)
    build_notifier(spec, HttpClient(), "", None).notify(Notification("ops", (group,)))
    twiml = svc.requests[0].form()["Twiml"][0]
    assert 3900 < len(twiml) <= 4000 and "&lt;&amp;&gt;" in twiml


def test_twilio_numbers_are_checked_at_load() -> None:
    with pytest.raises(ConfigError, match=r"receivers\[0\]\.twilio\.to: .*'555-0002'"):
        parse_config("alerting: {receivers: [{name: c, type: twilio, from: '+15550001', to: ['555-0002']}]}")
    assert parse_config("alerting: {receivers: [{name: c, type: twilio, from: '+15550001', "
                        "to: ['+15550002', 'sip:oncall@example.com']}]}")


# -- Slack ----------------------------------------------------------------------------------------

def test_slack_escapes_so_a_label_cannot_ping_a_channel(fake: Fake) -> None:
    slack = slack_handler("/services/T1/B1/XYZ")
    svc = fake(slack)
    spec = SlackReceiverSpec(name="s", webhook_url=f"{svc.url}/services/T1/B1/XYZ")
    build_notifier(spec, HttpClient(), "", None).notify(
        note(alert(instance="<!channel> & <@U123|boss> <http://evil|click>")))
    assert slack.pings == []
    assert "firing: <!channel> & <@U123|boss> <http://evil|click> value=1" in slack.shown[0]


# -- PagerDuty ------------------------------------------------------------------------------------

def test_pagerduty_omits_empty_optional_fields(fake: Fake) -> None:
    svc = fake(pagerduty_handler())
    n = build_notifier(PagerDutyReceiverSpec(name="p", routing_key=PD_KEY, url=svc.url), HttpClient(), "",
                       None)
    bare = Alert(Labels({"alertname": "Up", "tier": "P0"}), {}, 0.0)
    n.notify(note(bare))  # no service, no dimension: the fake refuses "component": ""
    payload = svc.requests[0].json()["payload"]
    assert "component" not in payload and "group" not in payload and payload["class"] == "Up"
    n.notify(note(alert()))
    assert svc.requests[1].json()["payload"]["component"] == "ranker"


def test_pagerduty_dedup_key_is_stable_per_group_and_differs_between_groups(fake: Fake) -> None:
    svc = fake(pagerduty_handler())
    n = build_notifier(PagerDutyReceiverSpec(name="p", routing_key=PD_KEY, url=svc.url), HttpClient(), "",
                       None)
    n.notify(note(alert(), key="g1"))
    n.notify(note(alert(instance="b"), now=99.0, key="g1"))  # a later flush of the same group
    n.notify(note(alert(), key="g2"))
    a, b, c = (r.json()["dedup_key"] for r in svc.requests)
    assert a == b != c


def test_pagerduty_event_stays_under_512_kb(fake: Fake) -> None:
    svc = fake(pagerduty_handler())
    n = build_notifier(PagerDutyReceiverSpec(name="p", routing_key=PD_KEY, url=svc.url), HttpClient(), "",
                       None)
    storm = [alert(instance=f"host-{i:05d}.{'x' * 60}.example.com:9000") for i in range(8000)]
    n.notify(note(*storm))  # about 1 MB of alert lines: the fake refuses over 512 KB
    (req,) = svc.requests
    lines = req.json()["payload"]["custom_details"]["alerts"]
    assert 400 * 1024 < len(req.body) <= 512 * 1024
    assert lines[-1] == f"… and {8001 - (len(lines) - 1)} more"  # 8,000 alerts and the summary line


@pytest.mark.parametrize("key", ["short", "x" * 33])
def test_pagerduty_routing_key_of_32_checked_at_load_without_echoing_it(key: str) -> None:
    with pytest.raises(ConfigError) as e:
        parse_config(f"alerting: {{receivers: [{{name: p, type: pagerduty, routing_key: '{key}'}}]}}")
    assert "routing_key" in str(e.value) and "32-character" in str(e.value) and key not in str(e.value)


# -- Retry-After on every HTTP receiver -----------------------------------------------------------

def _http_notifiers(url: str, clock: SimulatedClock) -> list[Any]:
    http = HttpClient(clock=clock)
    specs: list[Any] = [
        WeComReceiverSpec(name="w", key=KEY, url=url),
        PagerDutyReceiverSpec(name="p", routing_key=PD_KEY, url=url),
        TwilioReceiverSpec(name="t", account_sid="AC1", auth_token="tok", **{"from": "+15550001"},
                           to=("+15550002",), url=url),
        SlackReceiverSpec(name="s", webhook_url=url + "/services/T/B/X"),
        WebhookReceiverSpec(name="h", url=url + "/hook"),
    ]
    return [build_notifier(s, http, "", None) for s in specs]


@pytest.mark.parametrize(("status", "headers", "wait"), [
    (429, {"Retry-After": "7"}, 7.0),                                             # delta-seconds
    (503, {"Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT", "Date": "Wed, 21 Oct 2026 07:28:00 GMT"}, 30.0),
    (503, {"Retry-After": "Wed, 21 Oct 2026 07:28:30 GMT", "Date": ""}, 20.0),    # no Date: our clock
    (429, {"Retry-After": "soon"}, None),                                         # unreadable: not given
    (500, {"Retry-After": "7"}, None),                                            # only 429 and 503
])
def test_retry_after_reaches_the_notify_error(
        fake: Fake, status: int, headers: dict[str, str], wait: float | None) -> None:
    svc = fake(lambda r: (status, headers, b"slow down"))
    clock = SimulatedClock(1792567690.0)  # 2026-10-21 07:28:10 UTC
    for n in _http_notifiers(svc.url, clock):
        with pytest.raises(NotifyError) as e:
            n.notify(note(alert()))
        assert e.value.retryable and e.value.retry_after == wait, n.name


# -- Alertmanager's webhook: fingerprint and idempotency key --------------------------------------

@pytest.mark.parametrize(("labels", "expected"), [
    # prometheus/common model/signature_test.go (TestMetricToFingerprint), in Go's %016x
    ({}, f"{14695981039346656037:016x}"),
    ({"name": "garland, briggs", "fear": "love is not enough"}, f"{5799056148416392346:016x}"),
])
def test_alertmanager_fingerprint_known_vectors(labels: dict[str, str], expected: str) -> None:
    assert alertmanager_fingerprint(labels) == expected
    assert alertmanager_fingerprint(reversed(list(labels.items()))) == expected  # order does not matter


def test_webhook_fingerprint_and_idempotency_key(fake: Fake) -> None:
    svc = fake(webhook_handler())
    n = build_notifier(WebhookReceiverSpec(name="h", url=svc.url), HttpClient(), "", None)
    a = alert(instance="a")
    n.notify(note(a))
    first = svc.requests[0]
    assert first.json()["alerts"][0]["fingerprint"] == alertmanager_fingerprint(a.labels.to_dict())
    assert "idempotency-key" not in first.headers  # no key before the delivery core sets one

    @dataclasses.dataclass(frozen=True)
    class Keyed(AlertGroup):  # a group as the delivery core queues it, carrying its stable key
        idempotency_key: str = "n-42-0"

    g = note(a).groups[0]
    n.notify(Notification("ops", (Keyed(g.key, g.labels, g.alerts, g.now),)))
    assert svc.requests[1].headers["idempotency-key"] == "n-42-0"  # the fake checks any body copy


def test_webhook_refuses_nothing_it_should_accept_and_echo_is_an_error(fake: Fake) -> None:
    svc = fake(echo_handler(400))
    n = build_notifier(WebhookReceiverSpec(name="h", url=svc.url), HttpClient(), "", None)
    with pytest.raises(NotifyError) as e:
        n.notify(note(alert()))
    assert not e.value.retryable and e.value.retry_after is None and str(e.value).startswith("HTTP 400")


@settings(deadline=None)  # a loaded CI machine must not turn a slow example into a failure
@given(st.text(max_size=200))
def test_slack_escape_round_trips_and_leaves_no_control_character(text: str) -> None:
    from inferwatch.alerting.notify._slack import slack_escape

    escaped = slack_escape(text)
    assert "<" not in escaped and ">" not in escaped
    assert escaped.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") == text


@settings(deadline=None)
@given(st.lists(st.text(min_size=1, max_size=80), max_size=60))
def test_spoken_twiml_is_valid_xml_within_the_limit(titles: list[str]) -> None:
    from xml.etree import ElementTree

    from inferwatch.alerting.notify.phone import spoken_twiml

    twiml = spoken_twiml(titles, limit=1000)
    assert len(twiml) <= 1000 and ElementTree.fromstring(twiml).tag == "Response"
