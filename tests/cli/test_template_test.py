"""`inferwatch template test` renders a message without sending it; `config check` checks receivers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inferwatch.cli import main

CONFIG = """
server: {external_url: "http://dash.example"}
alerting:
  language: zh-CN
  timezone: Asia/Shanghai
  receivers:
    - {name: ding, type: dingtalk, url: "http://127.0.0.1:9/robot/send?access_token=TOKEN0123456789",
       secret: SEC0123456789abcdef, at_mobiles: ["13800000000"]}
    - {name: lark, type: feishu, url: "http://127.0.0.1:9/open-apis/bot/v2/hook/LARKTOKEN-0123456789"}
    - {name: txsms, type: tencent_sms, secret_id: AKIDx, secret_key: tencent-secret-key, template_id: "1",
       sms_sdk_app_id: "1400000000", sign_name: 推理监控, to: ["+8613800000000"]}
    - {name: mail, type: email, smarthost: "127.0.0.1:9", to: [ops@example.org], language: en}
"""
ALERT = {"labels": {"alertname": "ServiceUnavailable", "tier": "P0", "dimension": "service",
                    "service": "ranker"},
         "annotations": {"summary": "ranker 返回 503"}, "startsAt": "2026-12-04T01:58:00Z"}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cfg, alert = tmp_path / "inferwatch.yml", tmp_path / "alert.json"
    cfg.write_text(CONFIG)
    alert.write_text(json.dumps({"version": "4", "alerts": [ALERT]}))
    return cfg, alert


def test_renders_the_dingtalk_body_signed_with_secrets_blanked(
        files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    cfg, alert = files
    assert main(["template", "test", "--config", str(cfg), "--receiver", "ding", "--alert", str(alert)]) == 0
    out = capsys.readouterr().out
    head, _, body = out.partition("\n")
    assert head == "POST http://127.0.0.1:9/robot/send"  # nothing was sent: port 9 is closed
    text = json.loads(body)["markdown"]["text"]
    assert "[告警中:1] [P0 紧急] ServiceUnavailable" in text and "开始于 2026-12-04 09:58:00 CST" in text
    assert "TOKEN0123456789" not in out and "SEC0123456789abcdef" not in out


def test_feishu_token_in_the_path_is_blanked(files: tuple[Path, Path],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    cfg, alert = files
    assert main(["template", "test", "--config", str(cfg), "--receiver", "lark", "--alert", str(alert),
                 "--language", "en"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("POST http://127.0.0.1:9/open-apis/bot/v2/hook/<secret>\n")
    assert '"content": "[FIRING:1] [P0] ServiceUnavailable service=ranker"' in out


def test_sms_and_email_render_too(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    cfg, alert = files
    assert main(["template", "test", "--config", str(cfg), "--receiver", "txsms", "--alert", str(alert)]) == 0
    out = capsys.readouterr().out
    assert '"P0 紧急 ServiceUnavailable ranker"' in out and "tencent-secret-key" not in out
    assert main(["template", "test", "--config", str(cfg), "--receiver", "mail", "--alert", str(alert)]) == 0
    mail = capsys.readouterr().out
    assert "Subject: [FIRING:1] [P0] ServiceUnavailable" in mail and "since 2026-12-04 09:58:00 CST" in mail


@pytest.mark.parametrize(("args", "wanted"), [
    (["--receiver", "nope"], "no receiver 'nope' (known: "),
    (["--receiver", "ding", "--now", "yesterday"], "--now: "),
])
def test_bad_input_is_one_clear_line(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
                                     args: list[str], wanted: str) -> None:
    cfg, alert = files
    assert main(["template", "test", "--config", str(cfg), "--alert", str(alert), *args]) != 0
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err


def test_config_check_accepts_the_receivers_and_names_a_bad_one(
        files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg, _ = files
    assert main(["config", "check", str(cfg)]) == 0
    bad = tmp_path / "bad.yml"
    bad.write_text("alerting: {receivers: [{name: d, type: dingtalk, url: 'https://oapi.dingtalk.com/robot/send'}]}")
    assert main(["config", "check", str(bad)]) != 0
    err = capsys.readouterr().err
    assert "alerting.receivers[0].dingtalk.url: " in err and "access_token=TOKEN" in err
