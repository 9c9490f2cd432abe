"""`inferwatch serve` delivering to DingTalk and Feishu fakes, in Chinese, signed with the wall clock."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from tests.server._proc import start_serve

from alerting.fakes import FakeService
from alerting.fakes_cn import FakeDingTalk, FakeFeishu
from alerting.test_serve_delivery import BOUND_S, TOKEN, _post, _stop

pytestmark = pytest.mark.slow
DING_TOKEN, SECRET = "DING-TOKEN-FOR-SERVE-0001", "SEC-SERVE-SIGNING-SECRET-01"


def test_serve_sends_signed_chinese_messages_to_dingtalk_and_feishu(tmp_path: Path) -> None:
    robot = FakeDingTalk(DING_TOKEN, SECRET, time.time)
    bot = FakeFeishu(DING_TOKEN, SECRET, time.time)
    ding, lark = FakeService(robot).start(), FakeService(bot).start()
    cfg = tmp_path / "inferwatch.yml"
    cfg.write_text(f"""
server: {{data_dir: '{tmp_path / "data"}', api_token: {TOKEN}}}
rules: {{default_pack: false}}
alerting:
  default_actions: false
  language: zh-CN
  timezone: Asia/Shanghai
  route:
    receiver: ding
    group_wait: 0s
    routes: [{{matchers: ['tier="P0"'], receiver: lark, continue: true}},
             {{matchers: ['tier="P0"'], receiver: ding}}]
  receivers:
    - {{name: ding, type: dingtalk, url: '{ding.url}/robot/send?access_token={DING_TOKEN}', secret: {SECRET}}}
    - {{name: lark, type: feishu, url: '{lark.url}/open-apis/bot/v2/hook/{DING_TOKEN}', secret: {SECRET}}}
""")
    proc, url = start_serve(cfg)
    try:
        alert = {"status": "firing", "labels": {"alertname": "ServiceUnavailable", "service": "ranker",
                                                "tier": "P0", "dimension": "service", "instance": "10.0.0.1"},
                 "annotations": {"summary": "ranker 返回 503"}, "startsAt": "2026-12-04T01:00:00Z"}
        assert _post(url, [alert]).status_code == 200
        assert ding.got.wait(BOUND_S) and lark.got.wait(BOUND_S)
    finally:
        err = _stop(proc)
        ding.stop()
        lark.stop()
    assert "Traceback" not in err, err
    assert DING_TOKEN not in err and SECRET not in err
    (text,) = robot.texts
    assert "[告警中:1] [P0 紧急] ServiceUnavailable" in text and "开始于 2026-12-04 09:00:00 CST" in text
    (card,) = bot.cards
    assert card["header"]["template"] == "red" and "ranker 返回 503" in card["elements"][1]["text"]["content"]
