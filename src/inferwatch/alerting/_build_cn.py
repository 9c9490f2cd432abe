"""Notifiers of the platforms teams in China use, built from their specs."""

from __future__ import annotations

from inferwatch.alerting._dingtalk import DingTalkNotifier
from inferwatch.alerting._feishu import FeishuNotifier
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notifier
from inferwatch.alerting._wecom_app import WeComAppNotifier
from inferwatch.config._receivers_cn import DingTalkReceiverSpec, FeishuReceiverSpec, WeComAppReceiverSpec

__all__ = ["CN_SPECS", "CnSpec", "build_cn_notifier"]

CnSpec = DingTalkReceiverSpec | FeishuReceiverSpec | WeComAppReceiverSpec
CN_SPECS = (DingTalkReceiverSpec, FeishuReceiverSpec, WeComAppReceiverSpec)


def build_cn_notifier(spec: CnSpec, http: HttpClient, external_url: str, *, language: str = "en",
                      timezone: str = "UTC") -> Notifier:
    """The notifier of ``spec`` (raises ``MissingCredentialError`` without its credentials)."""
    if isinstance(spec, DingTalkReceiverSpec):
        return DingTalkNotifier(spec, http, external_url, language=language, timezone=timezone)
    if isinstance(spec, FeishuReceiverSpec):
        return FeishuNotifier(spec, http, external_url, language=language, timezone=timezone)
    return WeComAppNotifier(spec, http, external_url, language=language, timezone=timezone)
