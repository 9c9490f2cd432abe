"""Issue 53: the next-morning digest in the configured language and zone, as WeCom, DingTalk, Feishu and
e-mail show it (a digest receiver without its own zone takes ``alerting.timezone``)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from alerting.conftest import alert
from inferwatch.alerting import HttpClient, Notification, Pipeline
from inferwatch.alerting.notify import EmailNotifier, RecordingNotifier
from inferwatch.alerting.notify._dingtalk import DingTalkNotifier
from inferwatch.alerting.notify._feishu import FeishuNotifier
from inferwatch.alerting.notify._wecom import WeComNotifier
from inferwatch.config import parse_config
from inferwatch.model import SimulatedClock

CONFIG = """
alerting:
  language: zh-CN
  timezone: Asia/Shanghai
  receivers:
    - {name: digest, type: digest, deliver_to: ding}
    - {name: ding, type: dingtalk, url: 'https://oapi.dingtalk.com/robot/send?access_token=a'}
    - {name: lark, type: feishu, url: 'https://open.feishu.cn/open-apis/bot/v2/hook/a'}
    - {name: wecom, type: wecom, key: k}
    - {name: mail, type: email, to: [oncall@example.cn], from: iw@example.cn, smarthost: 'localhost:25'}
"""
HEADING = "inferwatch 每日汇总 1970-01-01 09:00 Asia/Shanghai：共 2 条告警"
DATA = re.compile(r"inferwatch|Asia/Shanghai|FeatureDrift|ConversionDrop|feature=age|service=ranker|"
                  r"service=checkout|\d")  # names, labels and numbers are data, left as they are


@pytest.fixture(scope="module")
def digest() -> tuple[Notification, dict[str, Any]]:
    cfg = parse_config(CONFIG).alerting
    recs = {r.name: RecordingNotifier(r.name) for r in cfg.effective_receivers()}
    p = Pipeline(cfg, clock=SimulatedClock(0), notifiers=recs, actions=[], rng=random.Random(1))
    p.send([alert("FeatureDrift", tier="P2", severity="warning", dimension="quality", feature="age",
                  value=0.13),
            alert("ConversionDrop", tier="P2", severity="warning", dimension="business", service="checkout",
                  end=None, value=0.021)], now=0)
    p.tick(3600)  # 09:00 in Shanghai (the digest took alerting.timezone): delivered to DingTalk
    (n,) = recs["ding"].sent
    return n, {r.name: r for r in cfg.receivers}


def _english_left(text: str) -> list[str]:
    return re.findall(r"[A-Za-z]{2,}", DATA.sub("", text))


def test_the_digest_comes_at_nine_local_in_chinese(digest: tuple[Notification, dict[str, Any]]) -> None:
    n, _ = digest
    assert n.kind == "digest" and n.notes[0] == HEADING
    assert "## 业务 (1)" in n.notes and "## 模型质量 (1)" in n.notes
    assert any(line.startswith("- FeatureDrift feature=age service=ranker：首次出现 1970-01-01 08:00")
               for line in n.notes)


def test_each_chat_channel_and_email_shows_it_in_chinese(digest: tuple[Notification, dict[str, Any]]) -> None:
    n, specs = digest
    zh: dict[str, Any] = {"language": "zh-CN", "timezone": "Asia/Shanghai"}
    http = HttpClient()
    ding = DingTalkNotifier(specs["ding"], http, "", **zh).body(n)["markdown"]
    card = FeishuNotifier(specs["lark"], http, "", **zh).body(n)["card"]
    wecom = WeComNotifier(specs["wecom"], http, "", **zh).body(n)["markdown"]["content"]
    mail = EmailNotifier(specs["mail"], "", **zh).message(n)
    body = mail.get_body(("plain",))
    assert body is not None
    assert ding["title"] == card["header"]["title"]["content"] == mail["Subject"] == HEADING
    card_text = card["elements"][0]["text"]["content"]
    assert HEADING not in card_text  # the card's header shows it once
    for text in (ding["text"], card_text, wecom, body.get_content()):
        assert "首次出现" in text and "最近值" in text and "已恢复" in text
        assert _english_left(text) == [], text
