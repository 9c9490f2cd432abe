"""``alerting.receivers``: where notifications go, each receiver chosen by its literal ``type``.

Base URLs are configurable so tests (and proxies) can point them elsewhere; a receiver
without its credentials falls back to printing in the terminal. The receiver types are not
listed here: ``alerting.notify``'s registry, one line per type, builds each and makes the
config's union of them (``inferwatch.settings.ReceiverSpec``); a new channel keeps its spec in
its own module there. These are the specs of the channels that came first and what every
spec shares.
"""

from inferwatch.settings.receivers._base import LANGUAGES, RateLimitSpec, ReceiverBase, check_matchers
from inferwatch.settings.receivers._chat import (
    DingTalkReceiverSpec,
    DiscordReceiverSpec,
    FeishuReceiverSpec,
    SlackReceiverSpec,
    TelegramReceiverSpec,
    WeComAppReceiverSpec,
    WeComReceiverSpec,
)
from inferwatch.settings.receivers._generic import (
    DigestReceiverSpec,
    DiscardReceiverSpec,
    EmailReceiverSpec,
    TerminalReceiverSpec,
    WebhookReceiverSpec,
)
from inferwatch.settings.receivers._paging import (
    PAGERDUTY_KEY_LEN,
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    PagerDutyReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    TwilioReceiverSpec,
)

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
