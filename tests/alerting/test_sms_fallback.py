"""Issue 53: a voice receiver's ``sms_fallback`` texts the number whose call failed or went unanswered.

The voice and SMS notifiers are the real Aliyun and Tencent ones, signing their requests, against
the Dysmsapi / Dyvmsapi and VMS / SMS fakes on loopback (each checks the documented signature and
request); the pipeline's escalation and history are the real ones, on simulated time.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeRequest, FakeService, Handler
from alerting.fakes_cn import FakeAliyun, FakeTencent
from alerting.test_confirmed_calls import AK_ID, AK_SECRET, ENGINEER, SID, SKEY, T0, config, run, stepped
from alerting.test_robots_cn import note
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import HttpClient, Pipeline, RecordingNotifier
from inferwatch.alerting.notify.fakes._base import Reply, json_reply
from inferwatch.alerting.notify.phone import AliyunVoiceNotifier
from inferwatch.config import AliyunVoiceReceiverSpec, parse_config
from inferwatch.model import SimulatedClock

Fake = Callable[[Handler], FakeService]


def _out_of_service(r: FakeRequest) -> Reply:
    """Dyvmsapi refusing every call (the account's voice service is stopped)."""
    return json_reply({"Code": "isv.OUT_OF_SERVICE", "Message": "业务停机", "RequestId": "FAKE"})


Made = tuple[Pipeline, FakeAliyun, dict[str, RecordingNotifier]]


def aliyun(fake: Fake, voice: Handler, rounds: int, clock: SimulatedClock) -> Made:
    sms = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SendSms")
    phone = (f"{{name: phone, type: aliyun_voice, access_key_id: {AK_ID}, access_key_secret: {AK_SECRET}, "
             f"tts_code: TTS_100001, to: ['{ENGINEER}'], url: '{fake(voice).url}', confirm: true, "
             f"rounds: {rounds}, sms_fallback: {{sign_name: 推理监控, template_code: SMS_100001, "
             f"url: '{fake(sms).url}'}}}}")
    cfg = parse_config(config(phone) + "  language: zh-CN\n").alerting
    recs = {name: RecordingNotifier(name) for name in ("lead", "director", "terminal")}
    return Pipeline(cfg, clock=clock, notifiers=recs, actions=[], rng=random.Random(1)), sms, recs


def test_every_round_unanswered_texts_the_number_once_then_escalates(fake: Fake) -> None:
    clock = SimulatedClock(T0)
    voice = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SingleCallByTts")
    p, sms, recs = aliyun(fake, voice, 2, clock)
    run(p, clock, 20 * 60)
    assert [n for n, _ in voice.sent] == [ENGINEER] * 2
    # one signed SendSms to the number nobody answered at, with the Chinese phrase
    assert sms.sent == [(ENGINEER, {"alert": "P0 紧急 ServiceDown ranker"})]
    (event,) = p.oncall.history.query(kinds=("unanswered",))
    assert event.t == T0 + 120 and event.detail["record"]["sms"] == "sent"
    assert stepped(p) == [(1, 0.0), (2, 120.0)] and recs["lead"].sent  # still escalated at once


def test_an_answered_call_sends_no_text(fake: Fake) -> None:
    clock = SimulatedClock(T0)
    voice = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SingleCallByTts")
    voice.answer = True
    p, sms, _ = aliyun(fake, voice, 2, clock)
    run(p, clock, 10 * 60)
    assert p.oncall.history.query(kinds=("answered",)) and sms.sent == []


def test_a_refused_call_is_texted_at_once_and_counts_as_unanswered(fake: Fake) -> None:
    clock = SimulatedClock(T0)
    p, sms, recs = aliyun(fake, _out_of_service, 1, clock)
    run(p, clock, 0)
    assert [n for n, _ in sms.sent] == [ENGINEER]  # texted while the call failed: delivered, not retried
    run(p, clock, 20 * 60)
    assert len(sms.sent) == 1  # not texted twice when the watch gives up on it
    (event,) = p.oncall.history.query(kinds=("unanswered",))
    assert event.t == T0 + 60 and "isv.OUT_OF_SERVICE" in event.detail["record"]["error"]
    assert stepped(p) == [(1, 0.0), (2, 60.0)] and recs["lead"].sent


def test_a_refused_call_and_a_refused_text_raise_naming_both(fake: Fake) -> None:
    clock = SimulatedClock(T0)
    sms = FakeAliyun(AK_ID, "another-secret-0000", clock.now, "SendSms")  # the text's signature fails
    spec = AliyunVoiceReceiverSpec.model_validate({
        "name": "phone", "access_key_id": AK_ID, "access_key_secret": AK_SECRET, "tts_code": "TTS_1",
        "to": [ENGINEER], "url": fake(_out_of_service).url,
        "sms_fallback": {"sign_name": "推理监控", "template_code": "SMS_1", "url": fake(sms).url}})
    with pytest.raises(NotifyError) as e:
        AliyunVoiceNotifier(spec, HttpClient(), clock=clock).notify(note(alert(tier="P0")))
    assert "isv.OUT_OF_SERVICE" in str(e.value) and "SignatureDoesNotMatch" in str(e.value)
    assert AK_SECRET not in str(e.value) and not e.value.retryable


def test_tencent_texts_after_an_unanswered_status_callback(fake: Fake) -> None:
    from inferwatch.alerting.notify import tencent_call_report

    clock = SimulatedClock(T0)
    vms, sms = FakeTencent(SID, SKEY, clock.now, "vms"), FakeTencent(SID, SKEY, clock.now, "sms")
    phone = (f"{{name: phone, type: tencent_voice, secret_id: {SID}, secret_key: {SKEY}, "
             f"template_id: '1234568', voice_sdk_app_id: '1400000001', to: ['+86{ENGINEER}'], "
             f"url: '{fake(vms).url}', confirm: true, "
             f"sms_fallback: {{sms_sdk_app_id: '1400000002', sign_name: 推理监控, template_id: '5678', "
             f"url: '{fake(sms).url}'}}}}")
    cfg = parse_config(config(phone)).alerting
    recs = {n: RecordingNotifier(n) for n in ("lead", "director", "terminal")}
    p = Pipeline(cfg, clock=clock, notifiers=recs, actions=[], rng=random.Random(1))
    run(p, clock, 0)
    clock.advance(30)
    report = tencent_call_report(vms.status_callback(vms.call_ids[0], answered=False))
    assert report is not None and p.calls.report(*report)
    run(p, clock, 40)
    ((number, params),) = sms.sent  # TC3-signed SendSms to the same number, the SMS application's ids
    assert number == f"+86{ENGINEER}" and params["SmsSdkAppId"] == "1400000002"
    assert params["TemplateId"] == "5678" and params["TemplateParamSet"] == ["P0 critical ServiceDown ranker"]
    (event,) = p.oncall.history.query(kinds=("unanswered",))
    assert event.detail["record"]["sms"] == "sent"


@pytest.mark.parametrize(("fallback", "message"), [
    ("{template_code: SMS_1}", r"sms_fallback\.sign_name"),
    ("{sign_name: x, template_code: SMS_1, sms_sdk_app_id: '1'}", "sms_sdk_app_id"),
])
def test_a_bad_fallback_is_a_clear_config_error(fallback: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(f"""
alerting:
  receivers: [{{name: phone, type: aliyun_voice, to: ['{ENGINEER}'], sms_fallback: {fallback}}}]
  route: {{receiver: phone}}
""")
