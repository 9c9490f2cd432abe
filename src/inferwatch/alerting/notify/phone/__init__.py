"""Channels that call or text a person: Twilio calls, Aliyun and Tencent voice and SMS, and what they share
(numbers from the on-call schedule, the spoken phrase, SMS after an unanswered call)."""

from inferwatch.alerting.notify.phone._aliyun import (
    AliyunSmsNotifier,
    AliyunVoiceNotifier,
    percent_encode,
    rpc_signature,
)
from inferwatch.alerting.notify.phone._phone import ScheduleNumbers, alert_phrase
from inferwatch.alerting.notify.phone._tencent import (
    TencentSmsNotifier,
    TencentVoiceNotifier,
    tc3_authorization,
    tencent_call_report,
)
from inferwatch.alerting.notify.phone._twilio import TwilioNotifier, spoken_twiml

__all__ = [
    "AliyunSmsNotifier",
    "AliyunVoiceNotifier",
    "ScheduleNumbers",
    "TencentSmsNotifier",
    "TencentVoiceNotifier",
    "TwilioNotifier",
    "alert_phrase",
    "percent_encode",
    "rpc_signature",
    "spoken_twiml",
    "tc3_authorization",
    "tencent_call_report",
]
