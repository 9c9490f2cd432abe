"""Alibaba Cloud and Tencent Cloud voice and SMS: signatures from the vendors' documented examples, fakes."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence

import pytest

from alerting.conftest import alert
from alerting.fakes import FakeService, Handler
from alerting.fakes_cn import FakeAliyun, FakeTencent
from alerting.test_robots_cn import note
from inferwatch._exceptions import ConfigError, NotifyError
from inferwatch.alerting import HttpClient, Notification
from inferwatch.alerting.notify.phone import (
    AliyunSmsNotifier,
    AliyunVoiceNotifier,
    TencentSmsNotifier,
    TencentVoiceNotifier,
    alert_phrase,
    percent_encode,
    rpc_signature,
    tc3_authorization,
)
from inferwatch.config import (
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    parse_config,
)
from inferwatch.model import SimulatedClock

Fake = Callable[[Handler], FakeService]
NOW = 1_764_800_000.0
AK_ID, AK_SECRET = "LTAI5tFakeAccessKeyId", "FakeAccessKeySecret0123456789ab"
SID, SKEY = "AKIDfakeSecretId0123456789", "fakeSecretKey0123456789abcdef"


# -- the vendors' documented examples ------------------------------------------------------------

def test_aliyun_rpc_signature_matches_the_sms_documentation_example() -> None:
    # Dysmsapi's "HTTP 协议及签名" page: AccessKeyId testId, AccessKeySecret testSecret, GET
    params = {"AccessKeyId": "testId", "Action": "SendSms", "Format": "XML", "OutId": "123",
              "PhoneNumbers": "15300000001", "RegionId": "cn-hangzhou", "SignName": "阿里云短信测试专用",
              "SignatureMethod": "HMAC-SHA1", "SignatureNonce": "45e25e9b-0a6f-4070-8c85-2956eda1b466",
              "SignatureVersion": "1.0", "TemplateCode": "SMS_71390007",
              "TemplateParam": '{"customer":"test"}',
              "Timestamp": "2017-07-12T02:42:19Z", "Version": "2017-05-25"}
    assert rpc_signature(params, "testSecret", "GET") == "zJDF+Lrzhj/ThnlvIToysFRq6t4="


def test_aliyun_rpc_signature_matches_the_signature_mechanism_example() -> None:
    # the RPC "签名机制" page: DescribeRegions with AccessKeySecret testsecret
    params = {"Format": "XML", "AccessKeyId": "testid", "Action": "DescribeRegions",
              "SignatureMethod": "HMAC-SHA1", "SignatureNonce": "3ee8c1b8-83d3-44af-a94f-4e0ad82fd6cf",
              "SignatureVersion": "1.0", "Version": "2014-05-26", "Timestamp": "2016-02-23T12:46:24Z"}
    assert rpc_signature(params, "testsecret", "GET") == "OLeaidS1JvxuMvnyHOwuJ+uX5qY="


@pytest.mark.parametrize(("raw", "encoded"), [
    # RFC 3986 unreserved characters stay; space is %20 (not +), * is %2A, ~ stays, / is encoded
    ("a b", "a%20b"), ("*", "%2A"), ("~-_.", "~-_."), ("/=&+", "%2F%3D%26%2B"), ("派", "%E6%B4%BE")])
def test_aliyun_percent_encoding(raw: str, encoded: str) -> None:
    assert percent_encode(raw) == encoded


PAYLOAD = b'{"Limit": 1, "Filters": [{"Values": ["\\u672a\\u547d\\u540d"], "Name": "instance-name"}]}'


@pytest.mark.parametrize(("secret_id", "secret_key", "signature"), [
    # the signature v3 page's example (DescribeInstances at 1551113065)
    ("AKIDz8krbsJ5yKBZQpn74WFkmLPx3EXAMPLE", "Gu5t9xGARNpq86cd98joQYCN3EXAMPLE",
     "72e494ea809ad7a8c8f7a4507b9bddcbaa8e581f516e8da2f66e2c5a96525168"),
    # the same page's newer edition, keys masked with asterisks
    ("AKIDz8krbsJ5yKBZQpn74WFkmLPx3*******", "Gu5t9xGARNpq86cd98joQYCN3*******",
     "2230eefd229f582d8b1b891af7107b91597240707d778ab3738f756258d7652c"),
])
def test_tc3_signature_matches_the_documented_example(secret_id: str, secret_key: str,
                                                      signature: str) -> None:
    auth = tc3_authorization(secret_id, secret_key, "cvm", "cvm.tencentcloudapi.com", PAYLOAD, 1551113065)
    assert auth == (f"TC3-HMAC-SHA256 Credential={secret_id}/2019-02-25/cvm/tc3_request, "
                    f"SignedHeaders=content-type;host, Signature={signature}")


# -- against the fakes ---------------------------------------------------------------------------

def nonces() -> Callable[[], str]:
    counter = itertools.count()
    return lambda: f"nonce-{next(counter)}"


def aliyun_sms(svc: FakeService, clock: SimulatedClock, **kw: object) -> AliyunSmsNotifier:
    kw.setdefault("to", ("13800000000", "13900000000"))
    spec = AliyunSmsReceiverSpec(name="p0", access_key_id=AK_ID, access_key_secret=AK_SECRET,  # type: ignore[arg-type]
                                 sign_name="推理监控", template_code="SMS_100001", url=svc.url, **kw)
    return AliyunSmsNotifier(spec, HttpClient(), clock=clock, nonce=nonces(), language="zh-CN")


def test_aliyun_sms_signed_and_delivered_to_every_number(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    api = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SendSms")
    aliyun_sms(fake(api), clock).notify(note(alert(tier="P0", severity="critical")))
    assert [x for x, _ in api.sent] == ["13800000000", "13900000000"]
    assert api.sent[0][1] == {"alert": "P0 紧急 HighLatency ranker"}


def test_aliyun_voice_calls_each_number(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    api = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SingleCallByTts")
    spec = AliyunVoiceReceiverSpec(name="p0", access_key_id=AK_ID, access_key_secret=AK_SECRET,  # type: ignore[arg-type]
                                   tts_code="TTS_100001", to=("13800000000", "13900000000"),
                                   url=fake(api).url)
    AliyunVoiceNotifier(spec, HttpClient(), clock=clock, nonce=nonces()).notify(note(alert(tier="P0")))
    assert [x for x, _ in api.sent] == ["13800000000", "13900000000"]
    assert api.sent[1][1] == {"alert": "P0 critical HighLatency ranker"}


def test_aliyun_errors_classified_and_secret_free(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    svc = fake(FakeAliyun(AK_ID, AK_SECRET, clock.now, "SendSms"))
    n = aliyun_sms(svc, clock)
    n.notify(note(alert()))
    with pytest.raises(NotifyError) as e:  # the same numbers within a minute
        n.notify(note(alert()))
    assert e.value.retryable and e.value.retry_after == 60 and "isv.BUSINESS_LIMIT_CONTROL" in str(e.value)
    bad = AliyunSmsNotifier(AliyunSmsReceiverSpec(name="p0", access_key_id=AK_ID,
                                                  access_key_secret="wrong-secret-0000",  # type: ignore[arg-type]
                                                  to=("13700000000",), url=svc.url),
                            HttpClient(), clock=clock)
    with pytest.raises(NotifyError) as e:
        bad.notify(note(alert()))
    assert not e.value.retryable and "SignatureDoesNotMatch" in str(e.value)
    assert "wrong-secret" not in str(e.value)
    stale = aliyun_sms(svc, SimulatedClock(NOW - 1000), to=("13600000000",))
    with pytest.raises(NotifyError, match=r"InvalidTimeStamp\.Expired"):
        stale.notify(note(alert()))


def test_template_variable_is_cut_to_the_platform_limit() -> None:
    long_name = note(alert(name="VeryLongAlertNameThatGoesOnAndOnForever", service="推理服务-排序-线上集群"),
                     alert(instance="b"))
    phrase = alert_phrase(long_name, "zh-CN", 35)
    assert len(phrase) <= 35 and phrase.endswith(" 等1项") and "[" not in phrase


def tencent(cls: type, svc: FakeService, clock: SimulatedClock, **kw: object) -> object:
    spec_cls = TencentSmsReceiverSpec if cls is TencentSmsNotifier else TencentVoiceReceiverSpec
    kw.setdefault("to", ("+8613800000000",))
    spec = spec_cls(name="p0", secret_id=SID, secret_key=SKEY, template_id="1234", url=svc.url, **kw)  # type: ignore[arg-type]
    return cls(spec, HttpClient(), clock=clock)


def test_tencent_sms_and_voice_signed_as_v3(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    sms = FakeTencent(SID, SKEY, clock.now, "sms")
    vms = FakeTencent(SID, SKEY, clock.now, "vms")
    tencent(TencentSmsNotifier, fake(sms), clock, to=("+8613800000000", "+8613900000000")).notify(  # type: ignore[attr-defined]
        note(alert(tier="P0")))
    tencent(TencentVoiceNotifier, fake(vms), clock).notify(note(alert(tier="P0")))  # type: ignore[attr-defined]
    assert [x for x, _ in sms.sent] == ["+8613800000000", "+8613900000000"]
    assert sms.sent[0][1]["TemplateParamSet"] == ["P0 critical HighLatency ranker"]
    assert [x for x, _ in vms.sent] == ["+8613800000000"]


def test_tencent_errors_classified(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    svc = fake(FakeTencent(SID, SKEY, clock.now, "sms"))
    n = tencent(TencentSmsNotifier, svc, clock)
    n.notify(note(alert()))  # type: ignore[attr-defined]
    with pytest.raises(NotifyError) as e:  # a second text to the number within 30 s
        n.notify(note(alert()))  # type: ignore[attr-defined]
    assert e.value.retryable and "PhoneNumberThirtySecondLimit" in str(e.value)
    for c, code in ((SimulatedClock(NOW - 301), "AuthFailure.SignatureExpire"),
                    (clock, "AuthFailure.SignatureFailure")):
        wrong = TencentSmsNotifier(TencentSmsReceiverSpec(
            name="p0", secret_id=SID, secret_key="other-key-0000" if c is clock else SKEY,  # type: ignore[arg-type]
            to=("+8613700000000",), url=svc.url), HttpClient(), clock=c)
        with pytest.raises(NotifyError) as e:
            wrong.notify(note(alert()))
        assert code in str(e.value) and not e.value.retryable and "other-key" not in str(e.value)


class Schedule:
    def __init__(self, on_call: Sequence[str]) -> None:
        self.on_call = on_call
        self.asked: list[tuple[str, float]] = []

    def numbers(self, schedule: str, at: float) -> Sequence[str]:
        self.asked.append((schedule, at))
        return self.on_call


def test_numbers_from_the_on_call_schedule(fake: Fake) -> None:
    clock = SimulatedClock(NOW)
    api = FakeAliyun(AK_ID, AK_SECRET, clock.now, "SingleCallByTts")
    spec = AliyunVoiceReceiverSpec(name="p0", access_key_id=AK_ID, access_key_secret=AK_SECRET,  # type: ignore[arg-type]
                                   tts_code="TTS_1", oncall="primary", url=fake(api).url)
    schedule = Schedule(["13500000000"])
    voice = AliyunVoiceNotifier(spec, HttpClient(), clock=clock, nonce=nonces(), oncall=schedule)
    voice.notify(note(alert()))
    assert schedule.asked == [("primary", NOW)] and [x for x, _ in api.sent] == ["13500000000"]
    with pytest.raises(NotifyError) as e:  # a schedule without a lookup: final, says why
        AliyunVoiceNotifier(spec, HttpClient(), clock=clock).notify(note(alert()))
    assert not e.value.retryable and "no on-call lookup is configured for 'primary'" in str(e.value)


def test_no_secret_in_logs_or_config_dump(fake: Fake, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    clock = SimulatedClock(NOW)
    svc = fake(FakeTencent(SID, SKEY, clock.now, "sms"))
    tencent(TencentSmsNotifier, svc, clock).notify(note(alert()))  # type: ignore[attr-defined]
    spec = TencentSmsReceiverSpec(name="p0", secret_id=SID, secret_key=SKEY, to=("+8613800000000",))  # type: ignore[arg-type]
    assert SKEY not in caplog.text and SKEY not in repr(spec) and SKEY not in spec.model_dump_json()


@pytest.mark.parametrize(("receiver", "message"), [
    ("{name: a, type: aliyun_sms, to: ['12']}", "not a phone number"),
    ("{name: a, type: tencent_voice, to: ['13800000000']}", "E.164"),
    ("{name: a, type: aliyun_voice}", "needs numbers in 'to' or an on-call schedule"),
])
def test_config_check_names_the_problem(receiver: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config(f"alerting: {{receivers: [{receiver}]}}")


def test_notification_without_groups_still_has_a_phrase() -> None:
    digest = Notification("x", (), ("digest: 3 alerts",), "digest")
    assert alert_phrase(digest, "en", 35) == "digest: 3 alerts"


ONCALL = """
  oncall:
    schedules:
      - name: ml
        timezone: Asia/Shanghai
        rotation: 7d
        handoff: "09:00"
        start: "2026-01-05"
        layers:
          - name: primary
            members: [{name: alice, contacts: {phone: "13800000001"}},
                      {name: bob, contacts: {aliphone: "13900000002", phone: "13700000003"}}]
"""


def test_schedule_numbers_follow_the_rotation() -> None:
    # rule: the on-call member's contact for this receiver, else their 'phone'
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from inferwatch.alerting.notify.phone import ScheduleNumbers

    cfg = parse_config("alerting:" + ONCALL).alerting
    start = datetime(2026, 1, 5, 9, 0, tzinfo=ZoneInfo("Asia/Shanghai")).timestamp()
    book = ScheduleNumbers(cfg.oncall, "aliphone")
    assert book.numbers("ml/primary", start + 86400) == ["13800000001"]  # alice: her phone
    assert book.numbers("ml", start + 8 * 86400) == ["13900000002"]  # bob: his number for this receiver
    assert ScheduleNumbers(cfg.oncall, "alisms").numbers("ml", start + 8 * 86400) == ["13700000003"]
    assert book.numbers("nosuch", start) == []


def test_serve_pipeline_calls_the_on_call_member(fake: Fake) -> None:
    import random
    import time

    from inferwatch.alerting import Pipeline
    from inferwatch.alerting.notify.phone import ScheduleNumbers

    api = FakeAliyun(AK_ID, AK_SECRET, time.time, "SingleCallByTts")
    svc = fake(api)
    cfg = parse_config("alerting:" + ONCALL + f"""
  route: {{receiver: aliphone, group_wait: 0s}}
  receivers:
    - {{name: aliphone, type: aliyun_voice, access_key_id: {AK_ID}, access_key_secret: {AK_SECRET},
       tts_code: TTS_1, oncall: ml/primary, url: '{svc.url}'}}
""").alerting
    Pipeline(cfg, actions=[], rng=random.Random(0)).send([alert(tier="P0")], now=0)
    (want,) = ScheduleNumbers(cfg.oncall, "aliphone").numbers("ml/primary", time.time())
    assert [x for x, _ in api.sent] == [want]


def test_an_unknown_schedule_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="oncall names no schedule"):
        parse_config("alerting: {receivers: [{name: v, type: aliyun_voice, oncall: nosuch}]}")
