"""Receivers: one module per channel (its notifier and the request it sends), the renderers, the builders."""

from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._notes_zh import translate_description, translate_summary
from inferwatch.alerting.notify._registry import CHANNELS, build_notifier, robot_key
from inferwatch.alerting.notify._template import parse_rfc3339, rfc3339, webhook_payload
from inferwatch.alerting.notify._tencent import tencent_call_report
from inferwatch.alerting.notify._terminal import RecordingNotifier, TerminalNotifier

__all__ = [
    "CHANNELS",
    "EmailNotifier",
    "RecordingNotifier",
    "TerminalNotifier",
    "build_notifier",
    "parse_rfc3339",
    "rfc3339",
    "robot_key",
    "tencent_call_report",
    "translate_description",
    "translate_summary",
    "webhook_payload",
]
