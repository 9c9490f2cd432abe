"""Receivers of the platforms teams in China use: DingTalk and Feishu robots, WeCom apps, cloud voice and SMS.

``url`` of a robot is its full webhook URL as the platform shows it (the token
is in it, so it is a ``Secret``). ``language`` overrides ``alerting.language``
for one receiver. Phone numbers come from ``to``; the on-call schedule can
supply them instead (``AlertingConfig`` names the hook, see ``alerting._phone``).
"""

from __future__ import annotations

import re
import urllib.parse
from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.config._receiver_base import RateLimitSpec, _Receiver
from inferwatch.config._types import Secret

__all__ = [
    "LANGUAGES",
    "AliyunSmsReceiverSpec",
    "AliyunVoiceReceiverSpec",
    "DingTalkReceiverSpec",
    "FeishuReceiverSpec",
    "TencentSmsReceiverSpec",
    "TencentVoiceReceiverSpec",
    "WeComAppReceiverSpec",
]

LANGUAGES = ("en", "zh-CN")
_MOBILE = re.compile(r"\+?[0-9][0-9-]{4,19}")


def _webhook(url: Secret | None, example: str, token_in: str) -> Secret | None:
    if url is None:
        return None
    parts = urllib.parse.urlsplit(url.reveal())
    query = dict(urllib.parse.parse_qsl(parts.query))
    has_token = bool(query.get("access_token")) if token_in == "query" else len(parts.path.rstrip("/")) > 1
    # the value is never echoed: it holds the robot's token
    if parts.scheme not in ("http", "https") or not parts.netloc or not has_token:
        raise ValueError(f"must be the robot's full webhook URL, such as {example}")
    return url


def _phones(v: tuple[str, ...], e164: bool = False) -> tuple[str, ...]:
    pattern = re.compile(r"\+[1-9][0-9]{6,14}") if e164 else _MOBILE
    bad = [m for m in v if not pattern.fullmatch(m)]
    if bad:
        raise ValueError(f"not a phone number{' in E.164 (+8613800000000)' if e164 else ''}: "
                         f"{', '.join(map(repr, bad))}")
    return v


class DingTalkReceiverSpec(_Receiver):
    """DingTalk (钉钉) group robot: markdown, signed URL when ``secret`` is set, @ by mobile or user id."""

    type: Literal["dingtalk"] = "dingtalk"
    url: Secret | None = Field(None, description="https://oapi.dingtalk.com/robot/send?access_token=...")
    secret: Secret | None = Field(None, description="the robot's signing secret (SEC...), if it signs")
    keywords: tuple[str, ...] = Field((), description="the robot's security keywords: one is always sent")
    at_mobiles: tuple[str, ...] = ()
    at_user_ids: tuple[str, ...] = ()
    at_all: bool = Field(False, description="@everyone (isAtAll); only when set")
    rate_limit: RateLimitSpec | None = Field(default_factory=RateLimitSpec)  # 20 a minute per robot

    @field_validator("url")
    @classmethod
    def _url(cls, v: Secret | None) -> Secret | None:
        return _webhook(v, "https://oapi.dingtalk.com/robot/send?access_token=TOKEN", "query")

    @field_validator("at_mobiles")
    @classmethod
    def _mobiles(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _phones(v)


class FeishuReceiverSpec(_Receiver):
    """Feishu / Lark (飞书) group robot: interactive cards coloured by tier, signed when ``secret`` is set."""

    type: Literal["feishu"] = "feishu"
    url: Secret | None = Field(None, description="https://open.feishu.cn/open-apis/bot/v2/hook/...")
    secret: Secret | None = Field(None, description="the robot's signing secret, if it signs")
    keywords: tuple[str, ...] = Field((), description="the robot's security keywords: one is always sent")
    # 100 a minute and 5 a second: 5 in any 4 s keeps both.
    rate_limit: RateLimitSpec | None = Field(default_factory=lambda: RateLimitSpec(count=5, per=4.0))

    @field_validator("url")
    @classmethod
    def _url(cls, v: Secret | None) -> Secret | None:
        return _webhook(v, "https://open.feishu.cn/open-apis/bot/v2/hook/TOKEN", "path")


class WeComAppReceiverSpec(_Receiver):
    """A WeCom (企业微信) application's messages to users, parties or tags (markdown)."""

    type: Literal["wecom_app"] = "wecom_app"
    corp_id: str = Field("", description="the company's corp id (ww...)")
    agent_id: int = Field(0, ge=0, description="the application's AgentId")
    secret: Secret | None = Field(None, description="the application's Secret")
    to_user: tuple[str, ...] = Field((), description="user ids ('@all': everyone)")
    to_party: tuple[str, ...] = ()
    to_tag: tuple[str, ...] = ()
    url: str = "https://qyapi.weixin.qq.com"

    @model_validator(mode="after")
    def _someone(self) -> WeComAppReceiverSpec:
        if not (self.to_user or self.to_party or self.to_tag):
            raise ValueError("needs at least one of to_user, to_party, to_tag")
        if self.secret is not None and not (self.corp_id and self.agent_id):
            raise ValueError("corp_id and agent_id are needed with a secret")
        return self


class _CloudPhone(_Receiver):
    to: tuple[str, ...] = Field((), description="numbers to call or text; empty: the on-call schedule's")
    oncall: str = Field("", description="schedule whose on-call numbers are used when 'to' is empty")
    param_name: str = Field("alert", description="the template's variable that gets the alert text")
    param_max_chars: int = Field(35, ge=1, description="the platform's limit on one variable")
    region: str = ""

    @model_validator(mode="after")
    def _numbers(self) -> _CloudPhone:
        if not self.to and not self.oncall:
            raise ValueError("needs numbers in 'to' or an on-call schedule in 'oncall'")
        return self


class _Aliyun(_CloudPhone):
    access_key_id: str = ""
    access_key_secret: Secret | None = None
    region: str = "cn-hangzhou"

    @field_validator("to")
    @classmethod
    def _to(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _phones(v)


class AliyunVoiceReceiverSpec(_Aliyun):
    """Alibaba Cloud voice notification (Dyvmsapi ``SingleCallByTts``): one call per number."""

    type: Literal["aliyun_voice"] = "aliyun_voice"
    tts_code: str = Field("", description="the approved TTS template (TTS_...)")
    called_show_number: str = Field("", description="the caller number shown; empty: the public pool")
    play_times: int = Field(2, ge=1, le=3)
    url: str = "https://dyvmsapi.aliyuncs.com"


class AliyunSmsReceiverSpec(_Aliyun):
    """Alibaba Cloud SMS (Dysmsapi ``SendSms``)."""

    type: Literal["aliyun_sms"] = "aliyun_sms"
    sign_name: str = Field("", description="the approved signature (签名)")
    template_code: str = Field("", description="the approved template (SMS_...)")
    url: str = "https://dysmsapi.aliyuncs.com"


class _Tencent(_CloudPhone):
    secret_id: str = ""
    secret_key: Secret | None = None
    region: str = "ap-guangzhou"
    template_id: str = ""

    @field_validator("to")
    @classmethod
    def _to(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return _phones(v, e164=True)


class TencentVoiceReceiverSpec(_Tencent):
    """Tencent Cloud voice message (VMS ``SendTtsVoice``, API 3.0 with TC3-HMAC-SHA256)."""

    type: Literal["tencent_voice"] = "tencent_voice"
    voice_sdk_app_id: str = ""
    play_times: int = Field(2, ge=1, le=3)
    url: str = "https://vms.tencentcloudapi.com"


class TencentSmsReceiverSpec(_Tencent):
    """Tencent Cloud SMS (``SendSms`` 2021-01-11, API 3.0 with TC3-HMAC-SHA256)."""

    type: Literal["tencent_sms"] = "tencent_sms"
    sms_sdk_app_id: str = ""
    sign_name: str = ""
    url: str = "https://sms.tencentcloudapi.com"
