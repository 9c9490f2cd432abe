"""An HA pair's messages name the replica that sent them, in every channel's own place for it.

Without a pair (``Notification.sender`` empty) nothing changes: the other message tests pin that.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from alerting.conftest import alert
from alerting.fakes import (
    PD_KEY,
    FakeService,
    Handler,
    pagerduty_handler,
    slack_handler,
    webhook_handler,
    wecom_handler,
)
from inferwatch.alerting import AlertGroup, HttpClient, Notification
from inferwatch.alerting.notify import build_notifier
from inferwatch.alerting.notify._message import render
from inferwatch.alerting.notify._template import notification_text
from inferwatch.config import PagerDutyReceiverSpec, SlackReceiverSpec, WebhookReceiverSpec, WeComReceiverSpec
from inferwatch.model import Labels

Fake = Callable[[Handler], FakeService]
KEY = "SECRET-ROBOT-KEY"


def _sent_by(sender: str, alerts: int = 1) -> Notification:
    labels = Labels({"alertname": "Down", "service": "ranker"})
    g = AlertGroup('{}:{alertname="Down",service="ranker"}', labels,
                   tuple(alert("Down", tier="P0", instance=f"h{i}") for i in range(alerts)), 10.0)
    return Notification("ops", (g,), sender=sender)


def test_the_text_ends_with_the_sender_in_english_and_chinese() -> None:
    # rule: the footer follows the dashboard link, in the receiver's language
    n = _sent_by("b")
    en = render(n, external_url="http://dash").fit(1 << 20).splitlines()
    zh = render(n, language="zh-CN", external_url="http://dash").fit(1 << 20).splitlines()
    assert en[-2:] == ["dashboard: http://dash", "sent by inferwatch replica b"]
    assert zh[-2:] == ["查看面板: http://dash", "由 inferwatch 副本 b 发送"]
    assert notification_text(n, external_url="http://dash").splitlines()[-1] == "sent by inferwatch replica b"
    # rule: without a pair, no footer (the text is as it always was)
    alone = replace(n, sender="")
    assert "replica" not in render(alone).fit(1 << 20) and "replica" not in notification_text(alone)


def test_a_message_cut_to_its_limit_keeps_the_sender() -> None:
    # rule: like the link, the footer is never cut; whole alert blocks go first
    text = render(_sent_by("a", alerts=200)).fit(600)
    assert len(text.encode()) <= 600 and "more alerts" in text
    assert text.endswith("sent by inferwatch replica a")


def test_each_channel_names_the_sender(fake: Fake) -> None:
    # rule: chat robots in the text, a webhook as "replica" (beside Alertmanager's keys), PagerDuty in details
    wecom, slack = fake(wecom_handler(KEY)), fake(slack_handler("/services/T/B/X"))
    hook, pd = fake(webhook_handler()), fake(pagerduty_handler())
    specs = [WeComReceiverSpec(name="ops", key=KEY, url=wecom.url),
             SlackReceiverSpec(name="s", webhook_url=f"{slack.url}/services/T/B/X"),
             WebhookReceiverSpec(name="hook", url=hook.url + "/hook"),
             PagerDutyReceiverSpec(name="pd", routing_key=PD_KEY, url=pd.url)]
    for spec in specs:
        build_notifier(spec, HttpClient(), "http://dash", None).notify(_sent_by("b"))
    assert wecom.requests[0].json()["markdown"]["content"].endswith("sent by inferwatch replica b")
    assert slack.requests[0].json()["text"].endswith("sent by inferwatch replica b")
    assert hook.requests[0].json()["replica"] == "b"
    assert pd.requests[0].json()["payload"]["custom_details"]["replica"] == "b"
