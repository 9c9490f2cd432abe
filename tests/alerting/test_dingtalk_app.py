"""DingTalk through an app's robot, against the new server API's fake: the page's interactive card is
updated in place when the group is acknowledged and when it resolves, with no new message; the token
is cached and refreshed when refused; a card that cannot be updated gets a new one."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler
from alerting.test_robots_cn import note
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import HttpClient, Pipeline, RecordingNotifier
from inferwatch.alerting.notify._dingtalk import DingTalkNotifier
from inferwatch.alerting.notify.fakes import FakeDingTalkApp
from inferwatch.config import DingTalkReceiverSpec, parse_config
from inferwatch.model import SimulatedClock

Fake = Callable[[Handler], FakeService]
KEY, SECRET, ROBOT = "dingabcdefghij0123456", "APP-SECRET-0123456789abcdefghij-xyz", "dingrobot0123456789"
GROUP = "cidAbCdEfGh0123456789+xyz=="
T0 = 1_796_000_000.0


def setup(fake: Fake) -> tuple[FakeDingTalkApp, FakeService, SimulatedClock]:
    clock = SimulatedClock(T0)
    api = FakeDingTalkApp(KEY, SECRET, ROBOT, {GROUP}, clock.now)
    return api, fake(api), clock


def notifier(svc: FakeService, clock: SimulatedClock, secret: str = SECRET) -> DingTalkNotifier:
    spec = DingTalkReceiverSpec.model_validate({"name": "ops", "app_key": KEY, "app_secret": secret,
                                                "robot_code": ROBOT, "open_conversation_id": GROUP,
                                                "api_url": svc.url})
    return DingTalkNotifier(spec, HttpClient(), "http://dash", clock=clock)


def _text(card: dict[str, object]) -> str:
    return json.dumps(card, ensure_ascii=False)


def test_a_page_is_updated_in_place_when_acknowledged_and_resolved_by_the_pipeline(fake: Fake) -> None:
    # rule: the acknowledgement (by the API's path, tell=True) and the resolution show on the card that
    # carried the page; no second message in the group
    api, svc, clock = setup(fake)
    cfg = parse_config(f"""
alerting:
  default_actions: false
  receivers:
    - {{name: team, type: dingtalk, app_key: {KEY}, app_secret: {SECRET}, robot_code: {ROBOT},
        open_conversation_id: '{GROUP}', api_url: '{svc.url}'}}
  escalations: [{{name: p0, steps: [{{after: 0s, notify: [team]}}, {{after: 30m, notify: [terminal]}}]}}]
  route: {{receiver: team, group_wait: 0s, group_interval: 1m, repeat_interval: 4h, escalation: p0}}
""")
    p = Pipeline(cfg.alerting, clock=clock, notifiers={"terminal": RecordingNotifier("terminal")}, actions=[],
                 rng=random.Random(1), external_url="https://iw.example.com", ack_key=b"k" * 32)
    p.send([alert("ServiceDown", start=T0, tier="P0")], now=T0)
    p.tick(T0)
    (biz,) = api.sent
    page = api.cards[biz]
    assert "[P0]" in page["header"]["title"]["text"] and "/api/v1/alerts/ack/link?" in _text(page)
    (group,) = p.group_states(T0 + 60)
    p.acknowledge(T0 + 60, "alice", "on it", gid=str(group["group_id"]), tell=True)
    (updated, acked), = api.updates
    assert updated == biz and acked["contents"][0]["text"].startswith("**Acknowledged by alice: on it**")
    assert "/ack/link?" not in _text(acked)
    p.send([alert("ServiceDown", start=T0, end=T0 + 120, tier="P0")], now=T0 + 120)
    for t in range(120, 300, 10):
        p.tick(T0 + t)
    assert [b for b, _ in api.updates] == [biz, biz]
    assert "RESOLVED" in api.cards[biz]["header"]["title"]["text"]
    assert api.sent == [biz] and api.token_calls == 1  # no new message; one token


def test_without_a_card_of_its_own_an_acknowledgement_is_a_new_card_and_gone_cards_too(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    n = notifier(svc, clock)
    n.notify(replace(note(alert(tier="P0")), notes=("Acknowledged by bob",), kind="acknowledged"))
    assert len(api.sent) == 1 and not api.updates
    n.notify(note(alert(tier="P0")))
    api.cards.clear()  # the platform no longer knows it: param.invalid, final
    n.notify(note(alert(tier="P0", end=5.0)))
    assert len(api.sent) == 3 and not api.updates


def test_token_is_cached_refreshed_when_refused_limits_retry_and_a_bad_secret_is_final(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    n = notifier(svc, clock)
    for _ in range(3):
        n.notify(note(alert()))
    assert api.token_calls == 1
    api.tokens.clear()  # InvalidAuthentication: a new token and the same send once more
    n.notify(note(alert()))
    assert api.token_calls == 2 and len(api.sent) == 4
    svc.replies.append((429, {"Content-Type": "application/json"},
                        b'{"code": "Forbidden.AccessDenied.QpsLimitForApi", "message": "limited"}'))
    with pytest.raises(NotifyError) as limited:
        n.notify(note(alert()))
    assert limited.value.retryable
    with pytest.raises(NotifyError) as bad:
        notifier(svc, clock, secret="WRONG-SECRET-0123456789abcdefgh").notify(note(alert()))
    assert not bad.value.retryable and "invalidClientIdOrSecret" in str(bad.value)
    assert "WRONG-SECRET" not in str(bad.value)


def test_an_app_needs_all_four_fields() -> None:
    with pytest.raises(ConfigError, match="app_key, app_secret, robot_code and open_conversation_id"):
        parse_config("alerting: {receivers: [{name: d, type: dingtalk, app_key: k, robot_code: r}]}")
