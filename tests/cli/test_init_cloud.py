"""Issue 53: `init` for a WeCom application and Aliyun / Tencent voice and SMS (flags or Chinese questions);
what it wrote is built by the receivers' registry and delivered to the platform fakes, which check
the documented signatures and tokens."""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService
from alerting.fakes_cn import FakeAliyun, FakeTencent, FakeWeComApp
from alerting.test_robots_cn import note
from inferwatch.alerting import HttpClient
from inferwatch.alerting.notify import build_notifier
from inferwatch.cli import main
from inferwatch.config import load_config

CORP, AGENT, APP_SECRET = "ww0123456789abcdef", 1000002, "APP-SECRET-FOR-INIT-000001"
AK_ID, AK_SECRET = "LTAI5tInitAccessKeyId", "INIT-ACCESS-KEY-SECRET-0001"
SID, SKEY = "AKIDinitSecretId0123456789", "INIT-TENCENT-SECRET-KEY-0001"
MOBILE = "13800000001"

# receiver -> (its flags, the fields init must write, the secret)
CASES: dict[str, tuple[list[str], dict[str, Any], str]] = {
    "wecom_app": (["--account", CORP, "--app-id", str(AGENT), "--key", APP_SECRET, "--to", "zhangsan,lisi"],
                  {"corp_id": CORP, "agent_id": AGENT, "to_user": ("zhangsan", "lisi")}, APP_SECRET),
    "aliyun_voice": (["--account", AK_ID, "--key", AK_SECRET, "--template", "TTS_100001", "--to", MOBILE,
                      "--rounds", "3"],
                     {"access_key_id": AK_ID, "tts_code": "TTS_100001", "to": (MOBILE,), "rounds": 3,
                      "confirm": True}, AK_SECRET),
    "aliyun_sms": (["--account", AK_ID, "--key", AK_SECRET, "--sign-name", "推理监控", "--template",
                    "SMS_100001", "--to", MOBILE],
                   {"sign_name": "推理监控", "template_code": "SMS_100001", "to": (MOBILE,)}, AK_SECRET),
    "tencent_voice": (["--account", SID, "--key", SKEY, "--app-id", "1400000001", "--template", "1234",
                       "--to", MOBILE],  # a mainland number is written as E.164
                      {"secret_id": SID, "voice_sdk_app_id": "1400000001", "template_id": "1234",
                       "to": ("+86" + MOBILE,), "confirm": False}, SKEY),
    "tencent_sms": (["--account", SID, "--key", SKEY, "--app-id", "1400000002", "--sign-name", "推理监控",
                     "--template", "5678", "--to", "+86" + MOBILE],
                    {"sms_sdk_app_id": "1400000002", "sign_name": "推理监控", "to": ("+86" + MOBILE,)}, SKEY),
}


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("INFERWATCH_CONFIG", raising=False)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _oncall() -> Any:
    cfg = load_config("inferwatch.yaml")
    return cfg, next(r for r in cfg.alerting.receivers if r.name == "oncall")


@pytest.mark.parametrize("receiver", sorted(CASES))
def test_init_writes_each_cloud_receiver_from_flags(receiver: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    flags, fields, secret = CASES[receiver]
    assert main(["init", "--language", "zh-CN", "--receiver", receiver, *flags]) == 0
    out = capsys.readouterr().out
    assert "已写入 inferwatch.yaml" in out and secret not in out
    assert Path("inferwatch.yaml").stat().st_mode & 0o077 == 0  # credentials inside: owner only
    cfg, spec = _oncall()
    assert spec.type == receiver and {k: getattr(spec, k) for k in fields} == fields
    key = getattr(spec, {"wecom": "secret", "aliyun": "access_key_secret"}.get(receiver.split("_")[0],
                                                                               "secret_key"))
    assert key.reveal() == secret
    routes = {r.matchers[0]: r.receiver for r in cfg.alerting.route.routes}
    phone, voice = receiver.endswith(("_voice", "_sms")), receiver.endswith("_voice")
    assert routes['tier="P1"'] == ("terminal" if voice else "oncall")  # P1 never phones anyone
    digest = next(r for r in cfg.alerting.receivers if r.name == "digest")
    assert digest.deliver_to == ("terminal" if phone else "oncall")  # no digest read out on a call
    assert main(["config", "show"]) == 0 and secret not in capsys.readouterr().out


def test_init_asks_for_a_wecom_application_in_chinese(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    answers = ["zh-CN", "Asia/Shanghai", "", "wecom_app", CORP, str(AGENT), APP_SECRET, "@all",
               "https://iw.example.cn"]
    monkeypatch.setattr("sys.stdin", _Tty("\n".join(answers) + "\n"))
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "wecom_app 的 corp_id (企业 ID, ww 开头)" in out and "wecom_app 的 secret (应用的 Secret)" in out
    assert "已写入 inferwatch.yaml" in out and APP_SECRET not in out
    _, spec = _oncall()
    assert (spec.corp_id, spec.agent_id, spec.to_user) == (CORP, AGENT, ("@all",))


def test_init_asks_for_confirmed_calls_and_says_where_tencent_calls_back(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    answers = ["zh-CN", "", "", "tencent_voice", SID, SKEY, "1400000001", "1234", f"{MOBILE},13900000002",
               "2"]
    monkeypatch.setattr("sys.stdin", _Tty("\n".join(answers) + "\n"))
    assert main(["init"]) == 0
    out = capsys.readouterr().out
    assert "未接听时每个号码最多呼叫几轮" in out and "/api/v1/alerts/voice/tencent" in out
    assert "P0 -> tencent_voice, P1 -> terminal" in out
    _, spec = _oncall()
    assert (spec.to, spec.rounds, spec.confirm) == (("+86" + MOBILE, "+8613900000002"), 2, True)
    text = Path("inferwatch.yaml").read_text(encoding="utf-8")
    assert "不打电话" in text  # the P1 route says why it is not the call


@pytest.mark.parametrize(("argv", "wanted"), [
    (["--receiver", "wecom_app", "--account", CORP, "--key", "S", "--to", "u"],
     "--app-id: the wecom_app receiver needs its agent_id"),
    (["--receiver", "wecom_app", "--account", CORP, "--app-id", "one", "--key", "S", "--to", "u"],
     "--app-id: agent_id is a whole number (got 'one')"),
    (["--receiver", "aliyun_sms", "--account", AK_ID, "--key", "S", "--template", "SMS_1", "--to", MOBILE],
     "--sign-name: the aliyun_sms receiver needs its sign_name"),
    (["--receiver", "aliyun_sms", "--account", AK_ID, "--key", "S", "--sign-name", "x", "--template", "SMS_1",
      "--to", MOBILE, "--rounds", "2"], "--rounds: not a field of the aliyun_sms receiver"),
    (["--receiver", "aliyun_voice", "--account", AK_ID, "--key", "S", "--template", "TTS_1",
      "--to", "call-me"], "not a phone number"),
    (["--receiver", "aliyun_voice", "--account", AK_ID, "--key", "S", "--template", "TTS_1", "--to", MOBILE,
      "--rounds", "9"], "rounds"),
    (["--receiver", "dingtalk", "--key", "https://oapi.dingtalk.com/robot/send?access_token=a", "--to", "x"],
     "--to: not a field of the dingtalk receiver"),
])
def test_bad_cloud_flags_are_one_line_and_write_nothing(
        argv: list[str], wanted: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", *argv]) == 2
    err = capsys.readouterr().err
    assert wanted in err and "Traceback" not in err and "'S'" not in err
    assert not Path("inferwatch.yaml").exists()


def _fake(receiver: str) -> Any:
    clock = time.time  # the notifiers sign with the wall clock, as `serve` does
    return {"wecom_app": lambda: FakeWeComApp(CORP, APP_SECRET, AGENT, {"zhangsan"}, clock),
            "aliyun_voice": lambda: FakeAliyun(AK_ID, AK_SECRET, clock, "SingleCallByTts"),
            "aliyun_sms": lambda: FakeAliyun(AK_ID, AK_SECRET, clock, "SendSms"),
            "tencent_voice": lambda: FakeTencent(SID, SKEY, clock, "vms"),
            "tencent_sms": lambda: FakeTencent(SID, SKEY, clock, "sms")}[receiver]()


@pytest.mark.parametrize("receiver", sorted(CASES))
def test_what_init_wrote_is_delivered_to_the_platform_fake(receiver: str) -> None:
    flags, _, _ = CASES[receiver]
    assert main(["init", "--language", "zh-CN", "--timezone", "Asia/Shanghai", "--receiver", receiver,
                 *flags]) == 0
    cfg, spec = _oncall()
    api = _fake(receiver)
    svc = FakeService(api).start()
    try:  # only the platform's address changes: every credential is the one init wrote
        notifier = build_notifier(spec.model_copy(update={"url": svc.url}), HttpClient(), "", io.StringIO(),
                                  language=cfg.alerting.language, timezone=cfg.alerting.timezone)
        notifier.notify(note(alert(tier="P0", severity="critical")))
    finally:
        svc.stop()
    if receiver == "wecom_app":  # lisi is not in the company: WeCom reaches zhangsan only
        ((users, content),) = api.delivered
        assert users == ["zhangsan"] and "HighLatency" in content and "紧急" in content
    else:
        ((number, params),) = api.sent
        assert number.removeprefix("+86") == MOBILE
        assert "P0 紧急 HighLatency ranker" in str(params)  # the Chinese phrase in the template variable
