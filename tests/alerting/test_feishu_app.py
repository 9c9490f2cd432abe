"""Feishu through an app's bot, against the IM API fake: the page's card is edited in place when the
group is acknowledged (by the API's path) and when it resolves, with no new message; the token is
cached; a card the app can no longer edit gets a new one."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler
from alerting.test_robots_cn import many, note
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import HttpClient, Pipeline, RecordingNotifier
from inferwatch.alerting.notify._feishu import FeishuNotifier
from inferwatch.alerting.notify.fakes import FakeFeishuApp
from inferwatch.config import FeishuReceiverSpec, parse_config
from inferwatch.model import SimulatedClock

Fake = Callable[[Handler], FakeService]
APP, SECRET, CHAT = "cli_a1b2c3d4e5f6", "APP-SECRET-0123456789abcdefghij", "oc_5ad11d72b830411d72b836c20"
T0 = 1_796_000_000.0


def setup(fake: Fake) -> tuple[FakeFeishuApp, FakeService, SimulatedClock]:
    clock = SimulatedClock(T0)
    api = FakeFeishuApp(APP, SECRET, {CHAT}, clock.now)
    return api, fake(api), clock


def notifier(svc: FakeService, clock: SimulatedClock, secret: str = SECRET) -> FeishuNotifier:
    spec = FeishuReceiverSpec.model_validate({"name": "ops", "app_id": APP, "app_secret": secret,
                                              "chat_id": CHAT, "api_url": svc.url})
    return FeishuNotifier(spec, HttpClient(), "http://dash", clock=clock)


def _text(card: dict[str, object]) -> str:
    return json.dumps(card, ensure_ascii=False)


def test_a_page_is_edited_in_place_when_acknowledged_and_resolved_by_the_pipeline(fake: Fake) -> None:
    # rule: the acknowledgement (here by the API's path, tell=True) and the resolution show on the card
    # that carried the page; no second message in the group
    api, svc, clock = setup(fake)
    cfg = parse_config(f"""
server: {{external_url: 'https://iw.example.com'}}
alerting:
  default_actions: false
  receivers:
    - {{name: team, type: feishu, app_id: {APP}, app_secret: {SECRET}, chat_id: {CHAT}, api_url: '{svc.url}'}}
  escalations: [{{name: p0, steps: [{{after: 0s, notify: [team]}}, {{after: 30m, notify: [terminal]}}]}}]
  route: {{receiver: team, group_wait: 0s, group_interval: 1m, repeat_interval: 4h, escalation: p0}}
""")
    p = Pipeline(cfg.alerting, clock=clock, notifiers={"terminal": RecordingNotifier("terminal")}, actions=[],
                 rng=random.Random(1), external_url="https://iw.example.com", ack_key=b"k" * 32)
    p.send([alert("ServiceDown", start=T0, tier="P0")], now=T0)
    p.tick(T0)
    (mid,) = api.sent
    page = api.cards[mid]
    assert page["header"]["template"] == "red" and page["config"]["update_multi"] is True
    assert "/api/v1/alerts/ack/link?" in _text(page)  # the Acknowledge button
    (group,) = p.group_states(T0 + 60)
    p.acknowledge(T0 + 60, "alice", "on it", gid=str(group["group_id"]), tell=True)
    (edited, acked), = api.edits
    assert edited == mid and acked["header"]["template"] == "wathet"
    assert "Acknowledged by alice: on it" in _text(acked) and "/ack/link?" not in _text(acked)
    p.send([alert("ServiceDown", start=T0, end=T0 + 120, tier="P0")], now=T0 + 120)
    for t in range(120, 300, 10):
        p.tick(T0 + t)
    assert [m for m, _ in api.edits] == [mid, mid] and api.cards[mid]["header"]["template"] == "green"
    assert api.sent == [mid] and api.token_calls == 1  # no new message; one token


def test_without_a_card_of_its_own_an_acknowledgement_is_a_new_card(fake: Fake) -> None:
    # a restart (or the HA peer sent the page): nothing to edit here, so the follow-up is a card of its own
    api, svc, clock = setup(fake)
    n = notifier(svc, clock)
    n.notify(replace(note(alert(tier="P0")), notes=("Acknowledged by bob",), kind="acknowledged"))
    assert len(api.sent) == 1 and not api.edits
    assert api.cards[api.sent[0]]["header"]["template"] == "wathet"


def test_a_card_that_can_no_longer_be_edited_gets_a_new_one_and_rate_limits_retry(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    n = notifier(svc, clock)
    n.notify(note(alert(tier="P0")))
    api.cards.clear()  # gone (recalled, or older than 14 days): 230001
    n.notify(note(alert(tier="P0", end=5.0)))
    assert len(api.sent) == 2 and not api.edits
    svc.replies.append((400, {}, b'{"code": 99991400, "msg": "request trigger frequency limit"}'))
    with pytest.raises(NotifyError) as e:
        n.notify(note(alert(tier="P0")))
    assert e.value.retryable


def test_token_is_cached_refreshed_when_refused_and_a_bad_secret_is_final(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    n = notifier(svc, clock)
    for _ in range(3):
        n.notify(note(alert()))
    assert api.token_calls == 1
    api.tokens.clear()  # revoked early: 99991663, a new token and the same send once more
    n.notify(note(alert()))
    assert api.token_calls == 2 and len(api.sent) == 4
    clock.advance(7200 - 299)
    n.notify(note(alert()))
    assert api.token_calls == 3
    with pytest.raises(NotifyError) as e:
        notifier(svc, clock, secret="WRONG-SECRET-0123456789abcdefgh").notify(note(alert()))
    assert not e.value.retryable and "10014" in str(e.value) and "WRONG-SECRET" not in str(e.value)


def test_a_big_group_fits_the_card_limit(fake: Fake) -> None:
    api, svc, clock = setup(fake)
    notifier(svc, clock).notify(many(400))
    card = api.cards[api.sent[0]]
    body = {"receive_id": CHAT, "msg_type": "interactive", "content": _text(card)}
    assert "more" in _text(card) and len(json.dumps(body, ensure_ascii=False).encode()) <= 30 * 1024


@pytest.mark.parametrize(("extra", "want"), [
    ("app_id: cli_x", "app_id, app_secret and chat_id together"),
    ("app_id: cli_x, app_secret: s, chat_id: oc_1, "
     "url: 'https://open.feishu.cn/open-apis/bot/v2/hook/abcdef012345'", "not both"),
])
def test_an_app_needs_its_three_fields_and_not_a_robot_url_too(extra: str, want: str) -> None:
    with pytest.raises(ConfigError, match=want):
        parse_config(f"alerting: {{receivers: [{{name: f, type: feishu, {extra}}}]}}")

