"""Notifiers of the platforms teams in China use, built from their specs."""

from __future__ import annotations

from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notifier
from inferwatch.alerting.notify._aliyun import AliyunSmsNotifier, AliyunVoiceNotifier
from inferwatch.alerting.notify._dingtalk import DingTalkNotifier
from inferwatch.alerting.notify._feishu import FeishuNotifier
from inferwatch.alerting.notify._phone import OnCallNumbers
from inferwatch.alerting.notify._tencent import TencentSmsNotifier, TencentVoiceNotifier
from inferwatch.alerting.notify._wecom_app import WeComAppNotifier
from inferwatch.config import (
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    DingTalkReceiverSpec,
    FeishuReceiverSpec,
    ReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    WeComAppReceiverSpec,
    WeComReceiverSpec,
)

__all__ = ["CN_SPECS", "CnSpec", "build_cn_notifier", "robot_key"]

CnSpec = (DingTalkReceiverSpec | FeishuReceiverSpec | WeComAppReceiverSpec | AliyunVoiceReceiverSpec
          | AliyunSmsReceiverSpec | TencentVoiceReceiverSpec | TencentSmsReceiverSpec)
CN_SPECS = (DingTalkReceiverSpec, FeishuReceiverSpec, WeComAppReceiverSpec, AliyunVoiceReceiverSpec,
            AliyunSmsReceiverSpec, TencentVoiceReceiverSpec, TencentSmsReceiverSpec)


def robot_key(spec: ReceiverSpec) -> str:
    """What a rate limit is counted per: the robot (two receivers posting to one robot share it)."""
    if isinstance(spec, DingTalkReceiverSpec | FeishuReceiverSpec) and spec.url is not None:
        return f"{spec.type}:{spec.url.reveal()}"  # in memory only, never shown
    if isinstance(spec, WeComReceiverSpec) and spec.key is not None:
        return f"wecom:{spec.url}:{spec.key.reveal()}"
    return f"receiver:{spec.name}"


def build_cn_notifier(spec: CnSpec, http: HttpClient, external_url: str, *, language: str = "en",
                      timezone: str = "UTC", oncall: OnCallNumbers | None = None) -> Notifier:
    """The notifier of ``spec`` (raises ``MissingCredentialError`` without its credentials).

    ``oncall`` gives voice and SMS receivers the numbers of an on-call schedule.
    """
    if isinstance(spec, DingTalkReceiverSpec):
        return DingTalkNotifier(spec, http, external_url, language=language, timezone=timezone)
    if isinstance(spec, FeishuReceiverSpec):
        return FeishuNotifier(spec, http, external_url, language=language, timezone=timezone)
    if isinstance(spec, WeComAppReceiverSpec):
        return WeComAppNotifier(spec, http, external_url, language=language, timezone=timezone)
    if isinstance(spec, AliyunVoiceReceiverSpec):
        return AliyunVoiceNotifier(spec, http, language=language, oncall=oncall)
    if isinstance(spec, AliyunSmsReceiverSpec):
        return AliyunSmsNotifier(spec, http, language=language, oncall=oncall)
    if isinstance(spec, TencentVoiceReceiverSpec):
        return TencentVoiceNotifier(spec, http, language=language, oncall=oncall)
    return TencentSmsNotifier(spec, http, language=language, oncall=oncall)
