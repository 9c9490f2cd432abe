"""Receivers: one module per channel (its notifier and the request it sends), the renderers, the builders."""

from inferwatch.alerting.notify._build import build_action, build_notifier, recording_action
from inferwatch.alerting.notify._build_cn import robot_key
from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._template import parse_rfc3339, rfc3339, webhook_payload
from inferwatch.alerting.notify._terminal import RecordingNotifier, TerminalNotifier

__all__ = [
    "EmailNotifier",
    "RecordingNotifier",
    "TerminalNotifier",
    "build_action",
    "build_notifier",
    "parse_rfc3339",
    "recording_action",
    "rfc3339",
    "robot_key",
    "webhook_payload",
]
