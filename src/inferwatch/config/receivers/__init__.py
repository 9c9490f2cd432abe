"""``alerting.receivers``: where notifications go, each receiver chosen by its literal ``type``.

Base URLs are configurable so tests (and proxies) can point them elsewhere; a receiver
without its credentials falls back to printing in the terminal. ``ReceiverSpec`` below
is the one list of receiver types (``alerting.notify`` builds each, a test keeps the two
in step).
"""

from typing import Annotated

from pydantic import Field

from inferwatch.config.receivers._base import LANGUAGES, RateLimitSpec, ReceiverBase, check_matchers
from inferwatch.config.receivers._chat import (
    DingTalkReceiverSpec,
    DiscordReceiverSpec,
    FeishuReceiverSpec,
    SlackReceiverSpec,
    TelegramReceiverSpec,
    WeComAppReceiverSpec,
    WeComReceiverSpec,
)
from inferwatch.config.receivers._generic import (
    DigestReceiverSpec,
    DiscardReceiverSpec,
    EmailReceiverSpec,
    TerminalReceiverSpec,
    WebhookReceiverSpec,
)
from inferwatch.config.receivers._paging import (
    PAGERDUTY_KEY_LEN,
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    PagerDutyReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    TwilioReceiverSpec,
)

# One line per receiver type (this order is the order errors and the reference list them in).
ReceiverSpec = Annotated[
    WeComReceiverSpec
    | PagerDutyReceiverSpec
    | TwilioReceiverSpec
    | SlackReceiverSpec
    | TelegramReceiverSpec
    | DiscordReceiverSpec
    | EmailReceiverSpec
    | WebhookReceiverSpec
    | TerminalReceiverSpec
    | DigestReceiverSpec
    | DingTalkReceiverSpec
    | FeishuReceiverSpec
    | WeComAppReceiverSpec
    | AliyunVoiceReceiverSpec
    | AliyunSmsReceiverSpec
    | TencentVoiceReceiverSpec
    | TencentSmsReceiverSpec
    | DiscardReceiverSpec,
    Field(discriminator="type"),
]

__all__ = [
    "LANGUAGES",
    "PAGERDUTY_KEY_LEN",
    "AliyunSmsReceiverSpec",
    "AliyunVoiceReceiverSpec",
    "DigestReceiverSpec",
    "DingTalkReceiverSpec",
    "DiscardReceiverSpec",
    "DiscordReceiverSpec",
    "EmailReceiverSpec",
    "FeishuReceiverSpec",
    "PagerDutyReceiverSpec",
    "RateLimitSpec",
    "ReceiverBase",
    "ReceiverSpec",
    "SlackReceiverSpec",
    "TelegramReceiverSpec",
    "TencentSmsReceiverSpec",
    "TencentVoiceReceiverSpec",
    "TerminalReceiverSpec",
    "TwilioReceiverSpec",
    "WeComAppReceiverSpec",
    "WeComReceiverSpec",
    "WebhookReceiverSpec",
    "check_matchers",
]
