"""The receivers, one line per channel, keyed by the receiver's ``type``; one call builds any of them.

A channel is its module (notifier, the request it sends, its limits), its config spec (in
``inferwatch.config``), its fake (``notify.fakes``), its docs section, and its line here. The
table is checked against the config's receiver union (every ``type`` there is built here).
Without its credentials a receiver falls back to the terminal, saying so once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notifier
from inferwatch.alerting.notify._aliyun import AliyunSmsNotifier, AliyunVoiceNotifier
from inferwatch.alerting.notify._dingtalk import DingTalkNotifier
from inferwatch.alerting.notify._discord import DiscordNotifier
from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._feishu import FeishuNotifier
from inferwatch.alerting.notify._pagerduty import PagerDutyNotifier
from inferwatch.alerting.notify._phone import ScheduleNumbers
from inferwatch.alerting.notify._slack import SlackNotifier
from inferwatch.alerting.notify._telegram import TelegramNotifier
from inferwatch.alerting.notify._tencent import TencentSmsNotifier, TencentVoiceNotifier
from inferwatch.alerting.notify._terminal import DiscardNotifier, FallbackNotifier, TerminalNotifier
from inferwatch.alerting.notify._twilio import TwilioNotifier
from inferwatch.alerting.notify._webhook import WebhookNotifier
from inferwatch.alerting.notify._wecom import WeComNotifier
from inferwatch.alerting.notify._wecom_app import WeComAppNotifier
from inferwatch.alerting.oncall import CallWatch
from inferwatch.config import (
    DingTalkReceiverSpec,
    FeishuReceiverSpec,
    OnCallConfig,
    ReceiverSpec,
    WeComReceiverSpec,
)
from inferwatch.model import Clock

__all__ = ["CHANNELS", "Context", "build_notifier", "robot_key"]


@dataclass(frozen=True)
class Context:
    """What a channel's notifier may need besides its spec."""

    http: HttpClient
    external_url: str
    language: str
    timezone: str
    terminal: TerminalNotifier
    oncall: ScheduleNumbers | None
    calls: CallWatch | None = None  # confirmed voice calls wait here for their outcome
    clock: Clock | None = None  # the pipeline's: a confirmed call is asked about on its time


Build = Callable[[Any, Context], Notifier]


def _chat(notifier: Callable[..., Notifier]) -> Build:
    """A chat channel's notifier: spec, HTTP client, dashboard link, language and time zone."""
    return lambda s, c: notifier(s, c.http, c.external_url, language=c.language, timezone=c.timezone)


CHANNELS: Mapping[str, Build] = {
    "wecom": _chat(WeComNotifier),
    "wecom_app": _chat(WeComAppNotifier),
    "dingtalk": _chat(DingTalkNotifier),
    "feishu": _chat(FeishuNotifier),
    "slack": _chat(SlackNotifier),
    "telegram": _chat(TelegramNotifier),
    "discord": _chat(DiscordNotifier),
    "email": lambda s, c: EmailNotifier(s, c.external_url, language=c.language, timezone=c.timezone),
    "webhook": lambda s, c: WebhookNotifier(s, c.http, c.external_url),
    "pagerduty": lambda s, c: PagerDutyNotifier(s, c.http, c.external_url),
    "twilio": lambda s, c: TwilioNotifier(s, c.http),
    "aliyun_voice": lambda s, c: AliyunVoiceNotifier(s, c.http, language=c.language, oncall=c.oncall,
                                                     calls=c.calls, clock=c.clock),
    "aliyun_sms": lambda s, c: AliyunSmsNotifier(s, c.http, language=c.language, oncall=c.oncall),
    "tencent_voice": lambda s, c: TencentVoiceNotifier(s, c.http, language=c.language, oncall=c.oncall,
                                                       calls=c.calls, clock=c.clock),
    "tencent_sms": lambda s, c: TencentSmsNotifier(s, c.http, language=c.language, oncall=c.oncall),
    "terminal": lambda s, c: c.terminal,
    "digest": lambda s, c: c.terminal,
    "discard": lambda s, c: DiscardNotifier(s.name),
}
"""Each receiver ``type`` and how its notifier is built."""


def build_notifier(spec: ReceiverSpec, http: HttpClient, external_url: str, stream: TextIO | None,
                   warn: Callable[[str], None] | None = None, *, language: str = "en",
                   timezone: str = "UTC", schedules: OnCallConfig | None = None,
                   calls: CallWatch | None = None, clock: Clock | None = None) -> Notifier:
    """The notifier for a receiver spec; without credentials, a terminal fallback that says so once."""
    language = spec.language or language  # a receiver's own language wins
    terminal = TerminalNotifier(spec.name, stream, external_url, language=language, timezone=timezone)
    oncall = ScheduleNumbers(schedules, spec.name) if schedules is not None else None
    try:
        return CHANNELS[spec.type](spec, Context(http, external_url, language, timezone, terminal, oncall,
                                                 calls, clock))
    except MissingCredentialError as exc:  # any other error is a bug or a bad config: it surfaces
        return FallbackNotifier(exc.receiver, f"no credentials: needs {exc.missing}", terminal, warn)


def robot_key(spec: ReceiverSpec) -> str:
    """What a rate limit is counted per: the robot (two receivers posting to one robot share it)."""
    if isinstance(spec, DingTalkReceiverSpec | FeishuReceiverSpec) and spec.url is not None:
        return f"{spec.type}:{spec.url.reveal()}"  # in memory only, never shown
    if isinstance(spec, WeComReceiverSpec) and spec.key is not None:
        return f"wecom:{spec.url}:{spec.key.reveal()}"
    return f"receiver:{spec.name}"
