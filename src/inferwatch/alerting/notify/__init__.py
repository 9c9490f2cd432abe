"""Receivers: one module per channel (its notifier and the request it sends), the renderers, the builders."""

from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._notes_zh import translate_description, translate_summary
from inferwatch.alerting.notify._registry import CHANNELS, Channel, ReceiverSpec, build_notifier, robot_key
from inferwatch.alerting.notify._template import parse_rfc3339, rfc3339, webhook_payload
from inferwatch.alerting.notify._terminal import RecordingNotifier, TerminalNotifier
from inferwatch.alerting.notify.phone import tencent_call_report

__all__ = [
    "CHANNELS",
    "Channel",
    "EmailNotifier",
    "ReceiverSpec",
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
