"""DingTalk and Feishu robots against their fakes: signature, shape, byte limit, rate folding, errors."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler
from alerting.fakes_cn import FakeDingTalk, FakeFeishu
from inferwatch._exceptions import NotifyError
from inferwatch.alerting import AlertGroup, HttpClient, Notification, Pipeline
from inferwatch.alerting.notify import build_notifier
from inferwatch.alerting.notify._dingtalk import DINGTALK_MAX_BYTES, DingTalkNotifier, dingtalk_sign
from inferwatch.alerting.notify._feishu import FEISHU_MAX_BYTES, FeishuNotifier, feishu_sign
from inferwatch.config import DingTalkReceiverSpec, FeishuReceiverSpec, parse_config
from inferwatch.model import Labels, SimulatedClock

Fake = Callable[[Handler], FakeService]
TOKEN = "DINGTOKEN0123456789abcdef"
SECRET = "SECabcdef0123456789SIGNINGSECRET"
NOW = 1_764_800_000.0


def note(*alerts_, now: float = 10.0) -> Notification:  # type: ignore[no-untyped-def]
    g = AlertGroup('{}:{alertname="HighLatency",service="ranker"}',
                   Labels({"alertname": "HighLatency", "service": "ranker"}), tuple(alerts_), now)
    return Notification("ops", (g,))


def many(n: int, **labels: str) -> Notification:
    return note(*(alert(instance=f"推理节点-{i:04d}", **labels) for i in range(n)))


def ding(svc: FakeService, clock: SimulatedClock, **kw: object) -> DingTalkNotifier:
    spec = DingTalkReceiverSpec(name="ops", url=f"{svc.url}/robot/send?access_token={TOKEN}",  # type: ignore[arg-type]
                                **kw)
    return DingTalkNotifier(spec, HttpClient(), "http://dash", clock=clock)


def test_dingtalk_sign_matches_the_documented_algorithm() -> None:
    # rule: sign = urlencode(base64(HMAC-SHA256(key=secret, msg=f"{ms}\n{secret}")))
    import base64
    import hashlib
    import hmac
    import urllib.parse

    want = urllib.parse.quote_plus(base64.b64encode(
        hmac.new(b"SECxyz", b"1577262236757\nSECxyz", hashlib.sha256).digest()))
    assert dingtalk_sign(1577262236757, "SECxyz") == want
    assert "%" in want or want.isalnum()  # URL-encoded: no raw '+', '/' or '='
    assert not set("+/=") & set(dingtalk_sign(1577262236757, "SECxyz"))


def test_dingtalk_markdown_signed_and_at_mentions(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    robot = FakeDingTalk(TOKEN, SECRET, clock.now)
    svc = fake(robot)
    n = ding(svc, clock, secret=SECRET, at_mobiles=("13800000000",), at_user_ids=("manager01",))
    n.notify(note(alert(instance="a")))
    body = svc.requests[0].json()
    assert body["msgtype"] == "markdown" and "HighLatency" in body["markdown"]["title"]
    assert robot.pings == [{"mobile:13800000000", "user:manager01"}]  # isAtAll only when configured
    assert body["at"]["isAtAll"] is False
    q = svc.requests[0].query
    assert abs(int(q["timestamp"][0]) - NOW * 1000) < 1 and q["sign"][0]


def test_dingtalk_at_all_only_when_configured(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    robot = FakeDingTalk(TOKEN, None, clock.now)
    ding(fake(robot), clock, at_all=True).notify(note(alert()))
    assert robot.pings == [{"@all"}]


def test_dingtalk_wrong_secret_or_stale_clock_is_final_and_secret_free(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    svc = fake(FakeDingTalk(TOKEN, SECRET, clock.now))
    bad = ding(svc, clock, secret="SECwrong-secret-value")
    with pytest.raises(NotifyError) as e:
        bad.notify(note(alert()))
    assert not e.value.retryable and "310000" in str(e.value)
    assert TOKEN not in str(e.value) and "SECwrong" not in str(e.value)
    late = ding(svc, SimulatedClock(NOW - 3601), secret=SECRET)  # signed over an hour off
    with pytest.raises(NotifyError, match="310000"):
        late.notify(note(alert()))


def test_dingtalk_keyword_security_is_respected(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    robot = FakeDingTalk(TOKEN, None, clock.now, keywords=("告警",))
    svc = fake(robot)
    ding(svc, clock, keywords=("告警",)).notify(note(alert()))
    assert len(robot.texts) == 1 and "告警" in svc.requests[0].json()["markdown"]["title"]
    with pytest.raises(NotifyError, match="310000: keywords not in content"):
        ding(svc, clock).notify(note(alert()))  # the receiver does not know the keyword


def test_dingtalk_cuts_multibyte_text_at_a_line_with_the_count(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    robot = FakeDingTalk(TOKEN, None, clock.now)
    svc = fake(robot)
    n = ding(svc, clock, at_mobiles=("13800000000",), language="zh-CN")
    n.notify(many(400))
    raw = svc.requests[0].body
    assert len(raw) <= DINGTALK_MAX_BYTES and len(raw) > DINGTALK_MAX_BYTES - 400
    text = robot.texts[0]
    lines = text.split("\n\n")
    shown = sum(1 for x in lines if x.startswith("- "))
    assert lines[-3] == f"… 还有 {400 - shown} 条告警" and 0 < shown < 400
    assert lines[-2] == "[查看面板](http://dash)" and lines[-1] == "@13800000000"  # mentions never cut
    assert all(x.endswith(")") for x in lines if x.startswith("- "))  # whole lines only
    assert robot.pings == [{"mobile:13800000000"}]


@pytest.mark.parametrize("code,retryable", [(130101, True), (410100, True), (-1, True), (310000, False),
                                            (300001, False), (460101, False), (40035, False)])
def test_dingtalk_errcodes_classified(fake: Fake, code: int, retryable: bool) -> None:
    svc = fake(FakeDingTalk(TOKEN, None, SimulatedClock(NOW).now))
    svc.replies.append((200, {"Content-Type": "application/json"},
                        f'{{"errcode":{code},"errmsg":"x {TOKEN}"}}'.encode()))
    with pytest.raises(NotifyError) as e:
        ding(svc, SimulatedClock(NOW)).notify(note(alert()))
    assert e.value.retryable is retryable and str(code) in str(e.value) and TOKEN not in str(e.value)
    if code in (130101, 410100):
        assert e.value.retry_after == 600  # throttled for 10 minutes: later, not sooner


def test_dingtalk_storm_folds_into_20_a_minute(fake: Fake) -> None:
    # rule: a 21st message within a minute would throttle the robot for 10 minutes; folded instead
    now = [0.0]
    robot = FakeDingTalk(TOKEN, None, lambda: now[0])
    svc = fake(robot)
    cfg = parse_config("alerting: {route: {receiver: d, group_wait: 0s, group_by: ['...']}, receivers: "
                       f"[{{name: d, type: dingtalk, url: '{svc.url}/robot/send?access_token={TOKEN}'}}]}}"
                       ).alerting
    p = Pipeline(cfg, actions=[], rng=random.Random(0))
    p.send([alert(instance=f"i{i}") for i in range(50)], now=0)
    assert len(svc.requests) == 20
    now[0] = 61
    p.tick(61)
    assert len(svc.requests) == 21 and robot.window.blocked_until < 0  # never throttled
    assert robot.texts[-1].count("[FIRING:1]") == 30  # the 30 held groups, in one message
    sent = [a for r in p.records.recent() if r.status == "sent" for g in r.groups for a in g["alerts"]]
    assert len(sent) == 50


def test_feishu_sign_matches_the_documented_algorithm() -> None:
    import base64
    import hashlib
    import hmac

    key = b"1599360473\ndemo-secret"
    assert feishu_sign(1599360473, "demo-secret") == base64.b64encode(
        hmac.new(key, b"", hashlib.sha256).digest()).decode()


def feishu(svc: FakeService, clock: SimulatedClock, url: str = "http://dash", **kw: object) -> FeishuNotifier:
    spec = FeishuReceiverSpec(name="ops", url=f"{svc.url}/open-apis/bot/v2/hook/{TOKEN}", **kw)  # type: ignore[arg-type]
    return FeishuNotifier(spec, HttpClient(), url, clock=clock)


@pytest.mark.parametrize("tier,colour", [("P0", "red"), ("P1", "orange"), ("P2", "yellow")])
def test_feishu_card_coloured_by_tier_with_fields_and_button(fake: Fake, tier: str, colour: str) -> None:
    clock = SimulatedClock(NOW)
    bot = FakeFeishu(TOKEN, SECRET, clock.now)
    feishu(fake(bot), clock, secret=SECRET, language="zh-CN").notify(note(alert(tier=tier)))
    card = bot.cards[0]
    assert card["header"]["template"] == colour
    fields = [f["text"]["content"] for f in card["elements"][0]["fields"]]
    assert "**维度**\n服务" in fields and "**服务**\nranker" in fields
    assert card["elements"][-1]["actions"][0] == {"tag": "button", "text": {"tag": "plain_text",
                                                  "content": "查看面板"}, "type": "primary", "url": "http://dash"}


def test_feishu_resolved_is_green_and_ack_button_when_the_notification_has_one(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    bot = FakeFeishu(TOKEN, None, clock.now)
    n = feishu(fake(bot), clock)
    n.notify(note(alert(end=5.0)))
    assert bot.cards[0]["header"]["template"] == "green"

    # the on-call work adds an acknowledgement line per firing group: it becomes a button
    n.notify(note(alert()).with_notes("Acknowledge: http://dash/ack?group=abc&sig=x"))
    card = bot.cards[1]
    assert [b["url"] for b in card["elements"][-1]["actions"]] == ["http://dash", "http://dash/ack?group=abc&sig=x"]
    assert "Acknowledge" not in card["elements"][1]["text"]["content"]


def test_feishu_signature_and_keyword_errors_are_final(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    svc = fake(FakeFeishu(TOKEN, SECRET, clock.now, keywords=("inferwatch",)))
    with pytest.raises(NotifyError) as e:
        feishu(svc, clock, secret="wrong-secret-value").notify(note(alert()))
    assert "19021" in str(e.value) and not e.value.retryable and TOKEN not in str(e.value)
    with pytest.raises(NotifyError, match="19024"):
        feishu(svc, clock, secret=SECRET).notify(note(alert()))
    feishu(svc, clock, secret=SECRET, keywords=("inferwatch",)).notify(note(alert()))


def test_feishu_rate_limit_is_retried_later(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    svc = fake(FakeFeishu(TOKEN, None, clock.now))
    n = feishu(svc, clock)
    for _ in range(5):
        n.notify(note(alert()))
    with pytest.raises(NotifyError) as e:  # a sixth within the second
        n.notify(note(alert()))
    assert e.value.retryable and e.value.retry_after == 60 and "11232" in str(e.value)


def test_feishu_body_within_20kb_with_chinese_text(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    bot = FakeFeishu(TOKEN, SECRET, clock.now)
    svc = fake(bot)
    feishu(svc, clock, secret=SECRET, language="zh-CN").notify(many(500))
    assert len(bot.cards) == 1 and FEISHU_MAX_BYTES - 300 < len(svc.requests[0].body) <= FEISHU_MAX_BYTES
    content = bot.cards[0]["elements"][1]["text"]["content"]
    assert "… 还有" in content.splitlines()[-1]


def test_robots_never_log_secrets(fake: Fake, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    clock = SimulatedClock(NOW)
    svc = fake(FakeDingTalk(TOKEN, SECRET, clock.now))
    fsvc = fake(FakeFeishu(TOKEN, SECRET, clock.now))
    ding(svc, clock, secret=SECRET).notify(note(alert()))
    feishu(fsvc, clock, secret=SECRET).notify(note(alert()))
    text = caplog.text + repr(DingTalkReceiverSpec(name="x", url=f"http://h/robot/send?access_token={TOKEN}",
                                                   secret=SECRET))  # type: ignore[arg-type]
    assert TOKEN not in text and SECRET not in text


def test_missing_url_falls_back_to_the_terminal() -> None:
    warned: list[str] = []
    for spec in (DingTalkReceiverSpec(name="d"), FeishuReceiverSpec(name="f")):
        build_notifier(spec, HttpClient(), "", None, warned.append).notify(note(alert()))
    assert [w.split(";")[0] for w in warned] == ["dingtalk[d]: no credentials: needs url",
                                                 "feishu[f]: no credentials: needs url"]


def test_the_shipped_fakes_serve_on_loopback() -> None:
    # inferwatch.alerting.fakes: what a demo or a user's test can run without the network
    import time

    from inferwatch.alerting.fakes import FakeDingTalk as ShippedDingTalk
    from inferwatch.alerting.fakes import LoopbackServer

    robot = ShippedDingTalk(TOKEN, SECRET, time.time)
    server = LoopbackServer(robot).start()
    try:
        spec = DingTalkReceiverSpec(name="ops", url=f"{server.url}/robot/send?access_token={TOKEN}",  # type: ignore[arg-type]
                                    secret=SECRET)
        DingTalkNotifier(spec, HttpClient()).notify(note(alert()))
    finally:
        server.stop()
    assert len(robot.texts) == 1 and server.requests[0].query["access_token"] == [TOKEN]


def test_two_receivers_posting_to_one_robot_share_its_20_a_minute(fake: Fake) -> None:
    # rule: the limit is the robot's, not the receiver's: two routes' receivers post to one group robot
    now = [0.0]
    robot = FakeDingTalk(TOKEN, None, lambda: now[0])
    svc = fake(robot)
    url = f"{svc.url}/robot/send?access_token={TOKEN}"
    cfg = parse_config("alerting: {route: {receiver: a, group_wait: 0s, group_by: ['...'], routes: "
                       "[{matchers: ['team=\"infra\"'], receiver: b}]}, receivers: "
                       f"[{{name: a, type: dingtalk, url: '{url}'}}, "
                       f"{{name: b, type: dingtalk, url: '{url}'}}]}}").alerting
    p = Pipeline(cfg, actions=[], rng=random.Random(0))
    p.send([alert(instance=f"i{i}", team="infra" if i % 2 else "ml") for i in range(40)], now=0)
    assert len(svc.requests) == 20 and robot.window.blocked_until < 0  # never throttled
    now[0] = 61
    p.tick(61)
    assert len(svc.requests) == 21  # the first receiver took the minute; the other's 20 folded into one
    sent = [a for r in p.records.recent() if r.status == "sent" for g in r.groups for a in g["alerts"]]
    assert len(sent) == 40


def test_a_storm_of_one_group_renders_in_linear_time() -> None:
    # rule: a group of thousands of alerts (group_by service in a storm) costs O(alerts) to render:
    # per-alert common labels or list lookups made 10,000 alerts take over 5 minutes
    import time

    spec = DingTalkReceiverSpec(name="d", url="http://h/robot/send?access_token=abc", language="zh-CN")  # type: ignore[arg-type]
    notifier = DingTalkNotifier(spec, HttpClient(), "http://dash")
    t0 = time.monotonic()
    body = notifier.body(many(5000))
    assert time.monotonic() - t0 < 10.0  # ~0.3 s here; quadratic was ~80 s
    assert body["markdown"]["text"].count("- 告警中") < 5000 and "… 还有 " in body["markdown"]["text"]
