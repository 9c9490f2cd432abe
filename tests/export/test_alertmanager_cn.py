"""``export alertmanager`` with DingTalk, Feishu, WeCom app, Aliyun and Tencent receivers.

Alertmanager has no integration for them: each goes through inferwatch's
Alertmanager webhook, the server behind it delivers with the same receiver,
and amtool routes every label set to the receivers inferwatch's router picks.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from inferwatch.alerting import Route
from inferwatch.config import load_config
from inferwatch.export import export

from ._helpers import config_from, export_to, run

CN_RECEIVERS: list[dict[str, Any]] = [
    {"name": "ding", "type": "dingtalk", "url": "https://oapi.dingtalk.com/robot/send?access_token=T0KEN0001",
     "secret": "SEC0123456789", "at_mobiles": ["13800000000"]},
    {"name": "lark", "type": "feishu", "url": "https://open.feishu.cn/open-apis/bot/v2/hook/0000-1111-2222",
     "secret": "lark-secret"},
    {"name": "app", "type": "wecom_app", "corp_id": "ww01", "agent_id": 1000002, "secret": "app-secret",
     "to_party": ["2"]},
    {"name": "aliphone", "type": "aliyun_voice", "access_key_id": "LTAI1", "access_key_secret": "ak-secret",
     "tts_code": "TTS_1", "to": ["13800000000"]},
    {"name": "alisms", "type": "aliyun_sms", "access_key_id": "LTAI1", "access_key_secret": "ak-secret",
     "sign_name": "推理监控", "template_code": "SMS_1", "to": ["13800000000"]},
    {"name": "txphone", "type": "tencent_voice", "secret_id": "AKID1", "secret_key": "tx-secret",
     "template_id": "1", "voice_sdk_app_id": "1400000000", "to": ["+8613800000000"]},
    {"name": "txsms", "type": "tencent_sms", "secret_id": "AKID1", "secret_key": "tx-secret",
     "template_id": "1", "sms_sdk_app_id": "1400000000", "sign_name": "推理监控", "to": ["+8613800000000"]},
]
CHINA: dict[str, Any] = {
    "server": {"api_token": "api-token-1"},
    "alerting": {
        "language": "zh-CN", "timezone": "Asia/Shanghai",
        "receivers": CN_RECEIVERS,
        "route": {"receiver": "ding", "routes": [
            {"matchers": ['tier="P0"'], "receiver": "aliphone", "continue": True},
            {"matchers": ['tier="P0"'], "receiver": "txsms", "continue": True},
            {"matchers": ['tier="P0"'], "receiver": "lark"},
            {"matchers": ['tier="P1"', 'service="ranker"'], "receiver": "app"},
            {"matchers": ['tier="P1"'], "receiver": "alisms", "continue": True},
            {"matchers": ['tier="P1"'], "receiver": "txphone"},
        ]},
    },
}
LABELS = [{"alertname": "ServiceUnavailable", "tier": "P0", "service": "ranker"},
          {"alertname": "SevereLatency", "tier": "P1", "service": "ranker"},
          {"alertname": "SevereLatency", "tier": "P1", "service": "search"},
          {"alertname": "FeatureDriftWarning", "tier": "P2"}, {}]
NAMES = [r["name"] for r in CN_RECEIVERS]


def _am(tmp_path: Path) -> dict[str, Any]:
    files = {f.path: yaml.safe_load(f.text) for f in export("alertmanager", config_from(tmp_path, CHINA))}
    return files


def test_each_goes_through_the_inferwatch_webhook(tmp_path: Path) -> None:
    receivers = {r["name"]: r for r in _am(tmp_path)["alertmanager.yml"]["receivers"]}
    for name in NAMES:
        (only,) = receivers[name]["webhook_configs"]
        assert only["url"] == "http://127.0.0.1:9464/api/v1/alertmanager", name
        assert only["http_config"]["authorization"]["credentials"] == "api-token-1"


def test_the_server_behind_delivers_with_the_same_receivers(tmp_path: Path) -> None:
    path = tmp_path / "behind.yaml"
    path.write_text(yaml.safe_dump(_am(tmp_path)["inferwatch-behind-alertmanager.yaml"]))
    behind = load_config(path)
    got = {r.name: r for r in behind.alerting.effective_receivers()}
    assert {n: got[n].type for n in NAMES} == {r["name"]: r["type"] for r in CN_RECEIVERS}
    ding = got["ding"]
    assert ding.secret is not None and ding.secret.reveal() == "SEC0123456789"  # type: ignore[union-attr]
    assert (behind.alerting.language, behind.alerting.timezone) == ("zh-CN", "Asia/Shanghai")


@pytest.mark.tools
def test_amtool_checks_and_routes_as_inferwatch(tmp_path: Path, require_tool: Callable[..., str]) -> None:
    amtool = require_tool("amtool")
    config = config_from(tmp_path, CHINA)
    out = export_to(tmp_path, "alertmanager", config)
    proc = run([amtool, "check-config", str(out / "alertmanager.yml")])
    assert proc.returncode == 0 and "SUCCESS" in proc.stdout, proc.stdout + proc.stderr
    for labels in LABELS:
        proc = run([amtool, "config", "routes", "test", f"--config.file={out / 'alertmanager.yml'}",
                    *(f"{k}={v}" for k, v in labels.items())])
        assert proc.returncode == 0, proc.stdout + proc.stderr
        got = [r for r in proc.stdout.strip().split(",") if r != "inferwatch-actions"]
        want = [r.options.receiver for r in Route.build(config.alerting.route).match(labels)]
        assert got == want, labels
    assert want == ["ding"]  # the last label set falls through to the root
