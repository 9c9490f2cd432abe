"""Issue 53: `init --language zh-CN` asks and comments in Chinese, with DingTalk's secret and @ list,
Feishu's secret, the time zone and external_url; `serve` delivers with what it wrote."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest
from tests.server._proc import start_serve

from alerting.fakes import FakeService
from alerting.fakes_cn import FakeDingTalk
from alerting.test_serve_delivery import BOUND_S, TOKEN, _post, _stop
from inferwatch.cli import main
from inferwatch.cli._init import default_language, default_timezone
from inferwatch.config import load_config

DING_TOKEN, SECRET = "DING-TOKEN-FOR-INIT-0001", "SEC-INIT-SIGNING-SECRET-0001"
MOBILES = ("13800000001", "13900000002")


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INFERWATCH_CONFIG", raising=False)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("env", "wanted"), [
    ({"LANG": "zh_CN.UTF-8"}, "zh-CN"),
    ({"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh-CN"),  # LC_ALL wins over LANG
    ({"LANG": "en_GB.UTF-8"}, "en"),
    ({}, "en"),                                                  # no locale at all: English
])
def test_the_language_defaults_from_the_locale(env: dict[str, str], wanted: str) -> None:
    assert default_language(env) == wanted


def test_the_time_zone_defaults_from_tz_then_localtime(tmp_path: Path) -> None:
    link = tmp_path / "localtime"
    link.symlink_to("/usr/share/zoneinfo/Asia/Shanghai")
    assert default_timezone({"TZ": "Europe/Berlin"}, link) == "Europe/Berlin"
    assert default_timezone({}, link) == "Asia/Shanghai"
    assert default_timezone({"TZ": "Nowhere/Else"}, tmp_path / "missing") == "UTC"


def test_init_asks_in_chinese_and_writes_a_chinese_config(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    answers = ["zh-CN", "Asia/Shanghai", "http://10.0.0.5:9000/metrics", "dingtalk",
               f"https://oapi.dingtalk.com/robot/send?access_token={DING_TOKEN}", SECRET,
               ",".join(MOBILES), "y", "https://iw.example.cn"]
    monkeypatch.setattr("sys.stdin", _Tty("\n".join(answers) + "\n"))
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "消息中时间的时区" in out and "钉钉消息要 @ 的手机号" in out and "已写入 inferwatch.yaml" in out
    assert SECRET not in out
    cfg = load_config("inferwatch.yaml")
    ding = next(r for r in cfg.alerting.receivers if r.name == "oncall")
    assert (cfg.alerting.language, cfg.alerting.timezone) == ("zh-CN", "Asia/Shanghai")
    assert ding.type == "dingtalk" and ding.secret is not None and ding.secret.reveal() == SECRET
    assert ding.at_mobiles == MOBILES and ding.at_all is True
    assert cfg.server.external_url == "https://iw.example.cn"
    digest = next(r for r in cfg.alerting.receivers if r.name == "digest")
    assert digest.timezone == "Asia/Shanghai"
    text = Path("inferwatch.yaml").read_text(encoding="utf-8")
    assert "# P0: 服务不可用, 立即通知值班" in text and "# P0: service down" not in text
    assert Path("inferwatch.yaml").stat().st_mode & 0o077 == 0  # a secret inside: owner only


def test_init_flags_set_a_feishu_secret_and_english_stays_the_default(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LANG", "C.UTF-8")
    hook = "https://open.feishu.cn/open-apis/bot/v2/hook/abc"
    assert main(["init", "--receiver", "feishu", "--key", hook, "--secret", SECRET,
                 "--timezone", "Asia/Shanghai"]) == 0
    assert SECRET not in capsys.readouterr().out
    cfg = load_config("inferwatch.yaml")
    lark = next(r for r in cfg.alerting.receivers if r.name == "oncall")
    assert lark.secret is not None and lark.secret.reveal() == SECRET
    assert cfg.alerting.language == "en" and "# P0: service down" in Path("inferwatch.yaml").read_text()
    assert main(["config", "check"]) == 0


@pytest.mark.parametrize(("argv", "wanted"), [
    (["--receiver", "wecom", "--key", "K", "--secret", "S"],
     "--secret: only the dingtalk and feishu robots sign"),
    (["--receiver", "terminal", "--at-mobiles", "138"],
     "--at-mobiles/--at-all: only for the dingtalk receiver"),
    (["--timezone", "Mars/Olympus"], "--timezone: unknown time zone 'Mars/Olympus'"),
])
def test_bad_zh_flags_are_one_line_and_write_nothing(
        argv: list[str], wanted: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", *argv]) == 2
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err and "S\n" not in err
    assert not Path("inferwatch.yaml").exists()


@pytest.mark.slow
def test_serve_delivers_signed_with_the_at_list_init_wrote(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    robot = FakeDingTalk(DING_TOKEN, SECRET, time.time)
    ding = FakeService(robot).start()
    try:
        assert main(["init", "--language", "zh-CN", "--timezone", "Asia/Shanghai", "--receiver", "dingtalk",
                     "--key", f"{ding.url}/robot/send?access_token={DING_TOKEN}", "--secret", SECRET,
                     "--at-mobiles", ",".join(MOBILES), "--external-url", "https://iw.example.cn",
                     "--listen", "127.0.0.1:0"]) == 0
        monkeypatch.setenv("INFERWATCH_API_TOKEN", TOKEN)  # the client's token; the config has none
        proc, url = start_serve(Path("inferwatch.yaml").resolve())
        try:
            alert = {"status": "firing", "labels": {"alertname": "ServiceUnavailable", "service": "ranker",
                                                    "tier": "P0", "dimension": "service"},
                     "annotations": {"summary": "ranker 返回 503"}, "startsAt": "2026-12-04T01:00:00Z"}
            assert _post(url, [alert]).status_code == 200
            assert ding.got.wait(BOUND_S)
        finally:
            err = _stop(proc)
    finally:
        ding.stop()
    assert "Traceback" not in err, err
    assert SECRET not in err and DING_TOKEN not in err
    # the fake accepted it only with a valid signature; it pinged the @ list in text and in `at`
    (text,) = [t for t in robot.texts if "ServiceUnavailable" in t]
    assert "【告警中" in text or "告警中" in text
    assert "开始于 2026-12-04 09:00:00 CST" in text
    assert {f"mobile:{m}" for m in MOBILES} <= robot.pings[robot.texts.index(text)]
