"""Receivers that page a person: PagerDuty, Twilio calls, Aliyun and Tencent voice and SMS."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.settings._types import Duration, FrozenModel, Secret
from inferwatch.settings.receivers._base import (
    ReceiverBase,
    phones,
)

__all__ = [
    "PAGERDUTY_KEY_LEN",
    "AliyunSmsFallback",
    "AliyunSmsReceiverSpec",
    "AliyunVoiceReceiverSpec",
    "PagerDutyReceiverSpec",
    "TencentSmsFallback",
    "TencentSmsReceiverSpec",
    "TencentVoiceReceiverSpec",
    "TwilioReceiverSpec",
]


PAGERDUTY_KEY_LEN = 32


class PagerDutyReceiverSpec(ReceiverBase):
    """PagerDuty Events API v2; P0 goes as ``critical``, which pages the on-call by phone."""

    type: Literal["pagerduty"] = "pagerduty"
    routing_key: Secret | None = Field(None, description="the 32-character integration key")
    url: str = "https://events.pagerduty.com"

    @field_validator("routing_key")
    @classmethod
    def _key_length(cls, v: Secret | None) -> Secret | None:
        # Events API v2 integration keys are 32 characters; never echo the value itself.
        if v is not None and len(v.reveal()) != PAGERDUTY_KEY_LEN:
            raise ValueError(f"must be the {PAGERDUTY_KEY_LEN}-character integration key "
                             f"(got {len(v.reveal())} characters)")
        return v


class TwilioReceiverSpec(ReceiverBase):
    """A Twilio voice call reading the alert (the phone path without PagerDuty)."""

    type: Literal["twilio"] = "twilio"
    account_sid: str = ""
    auth_token: Secret | None = None
    from_: str = Field("", alias="from")
    to: tuple[str, ...] = ()
    url: str = "https://api.twilio.com"

    model_config = FrozenModel.model_config | {"populate_by_name": True}

    @field_validator("from_", "to")
    @classmethod
    def _e164(cls, v: str | tuple[str, ...]) -> str | tuple[str, ...]:
        # Twilio takes E.164 numbers (+15551234567), or a client:/sip: address to call
        bad = [x for x in ((v,) if isinstance(v, str) else v)
               if x and not re.fullmatch(r"\+[1-9][0-9]{1,14}|(client|sip):\S+", x)]
        if bad:
            raise ValueError(f"not an E.164 number (+15551234567): {', '.join(map(repr, bad))}")
        return v


class _CloudPhone(ReceiverBase):
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
        return phones(v)


class AliyunSmsFallback(FrozenModel):
    """The text an Aliyun voice receiver sends a number whose call failed or went unanswered (same key)."""

    sign_name: str = Field(min_length=1, description="the approved SMS signature (签名)")
    template_code: str = Field(min_length=1, description="the approved SMS template (SMS_...)")
    param_name: str = Field("alert", description="the SMS template's variable that gets the alert text")
    url: str = "https://dysmsapi.aliyuncs.com"


class TencentSmsFallback(FrozenModel):
    """The text a Tencent voice receiver sends a number whose call failed or went unanswered (same key)."""

    sms_sdk_app_id: str = Field(min_length=1, description="the SMS application's SdkAppId")
    sign_name: str = Field(min_length=1, description="the approved SMS signature (签名)")
    template_id: str = Field(min_length=1, description="the approved SMS template's id")
    url: str = "https://sms.tencentcloudapi.com"


class AliyunVoiceReceiverSpec(_Aliyun):
    """Alibaba Cloud voice notification (Dyvmsapi ``SingleCallByTts``): one call per number."""

    type: Literal["aliyun_voice"] = "aliyun_voice"
    tts_code: str = Field("", description="the approved TTS template (TTS_...)")
    called_show_number: str = Field("", description="the caller number shown; empty: the public pool")
    play_times: int = Field(2, ge=1, le=3)
    url: str = "https://dyvmsapi.aliyuncs.com"
    sms_fallback: AliyunSmsFallback | None = Field(None, description="text the number when its call fails "
                                                   "or (with confirm) every round went unanswered")
    confirm: bool = Field(False, description="ask whether each call was answered (QueryCallDetailByCallId): "
                          "an answer acknowledges, no answer calls again, then escalates at once")
    rounds: int = Field(1, ge=1, le=5, description="calls per number while unanswered (needs confirm)")
    round_interval: Duration = Field(60.0, ge=60.0, description="from one call to the check of its answer "
                                     "and the next round (the platform allows one call a minute)")

    @model_validator(mode="after")
    def _rounds(self) -> AliyunVoiceReceiverSpec:
        _rounds_need_confirm(self.rounds, self.confirm)
        return self


def _rounds_need_confirm(rounds: int, confirm: bool) -> None:
    if rounds > 1 and not confirm:
        raise ValueError("rounds > 1 needs confirm: true (another round is called only when the last "
                         "was not answered)")


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
        return phones(v, e164=True)


class TencentVoiceReceiverSpec(_Tencent):
    """Tencent Cloud voice message (VMS ``SendTtsVoice``, API 3.0 with TC3-HMAC-SHA256)."""

    type: Literal["tencent_voice"] = "tencent_voice"
    voice_sdk_app_id: str = ""
    play_times: int = Field(2, ge=1, le=3)
    url: str = "https://vms.tencentcloudapi.com"
    sms_fallback: TencentSmsFallback | None = Field(None, description="text the number when its call fails "
                                                    "or (with confirm) every round went unanswered")
    confirm: bool = Field(False, description="wait for each call's status callback (voiceprompt_callback, "
                          "set the console's callback URL to <external_url>/api/v1/alerts/voice/tencent): "
                          "an answer acknowledges, no answer calls again, then escalates at once")
    rounds: int = Field(1, ge=1, le=5, description="calls per number while unanswered (needs confirm)")
    round_interval: Duration = Field(60.0, ge=60.0, description="from one call to the check of its answer "
                                     "and the next round")

    @model_validator(mode="after")
    def _rounds(self) -> TencentVoiceReceiverSpec:
        _rounds_need_confirm(self.rounds, self.confirm)
        return self


class TencentSmsReceiverSpec(_Tencent):
    """Tencent Cloud SMS (``SendSms`` 2021-01-11, API 3.0 with TC3-HMAC-SHA256)."""

    type: Literal["tencent_sms"] = "tencent_sms"
    sms_sdk_app_id: str = ""
    sign_name: str = ""
    url: str = "https://sms.tencentcloudapi.com"
