"""The receivers, one line per channel: its config spec and how its notifier is built; one call builds any.

A channel is its module (notifier, the request it sends, its limits, and, for a new channel,
its config spec), its fake (``notify.fakes``), its docs section, and its line here. The config's
union of receiver types, ``ReceiverSpec``, is made from these lines (``inferwatch.settings``, above
this package, types ``alerting.receivers`` with it), in this order (errors and the reference
list the types so). Without its credentials a receiver falls back to the terminal, saying so once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, TextIO, Union

from pydantic import Field

from inferwatch._exceptions import MissingCredentialError
from inferwatch.alerting._http import HttpClient
from inferwatch.alerting._notification import Notifier
from inferwatch.alerting.notify._dingtalk import DingTalkNotifier
from inferwatch.alerting.notify._discord import DiscordNotifier
from inferwatch.alerting.notify._email import EmailNotifier
from inferwatch.alerting.notify._feishu import FeishuNotifier
from inferwatch.alerting.notify._google_chat import GoogleChatNotifier, GoogleChatReceiverSpec
from inferwatch.alerting.notify._pagerduty import PagerDutyNotifier
from inferwatch.alerting.notify._slack import SlackNotifier
from inferwatch.alerting.notify._telegram import TelegramNotifier
from inferwatch.alerting.notify._terminal import DiscardNotifier, FallbackNotifier, TerminalNotifier
from inferwatch.alerting.notify._webhook import WebhookNotifier
from inferwatch.alerting.notify._wecom import WeComNotifier
from inferwatch.alerting.notify._wecom_app import WeComAppNotifier
from inferwatch.alerting.notify.phone import (
    AliyunSmsNotifier,
    AliyunVoiceNotifier,
    ScheduleNumbers,
    TencentSmsNotifier,
    TencentVoiceNotifier,
    TwilioNotifier,
)
from inferwatch.alerting.oncall import CallWatch
from inferwatch.model import Clock
from inferwatch.settings import (
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    DigestReceiverSpec,
    DingTalkReceiverSpec,
    DiscardReceiverSpec,
    DiscordReceiverSpec,
    EmailReceiverSpec,
    FeishuReceiverSpec,
    OnCallConfig,
    PagerDutyReceiverSpec,
    ReceiverBase,
    SlackReceiverSpec,
    TelegramReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    TerminalReceiverSpec,
    TwilioReceiverSpec,
    WebhookReceiverSpec,
    WeComAppReceiverSpec,
    WeComReceiverSpec,
)

__all__ = ["CHANNELS", "Channel", "Context", "ReceiverSpec", "build_notifier", "robot_key"]


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


@dataclass(frozen=True)
class Channel:
    """A receiver type: its config spec (whose literal ``type`` is the key) and how its notifier is built."""

    spec: type[ReceiverBase]
    build: Build

    @property
    def type(self) -> str:
        """The receiver's ``type``, as the config names it."""
        return str(self.spec.model_fields["type"].default)


def _aliyun_voice(s: Any, c: Context) -> Notifier:
    return AliyunVoiceNotifier(s, c.http, language=c.language, oncall=c.oncall, calls=c.calls, clock=c.clock)


def _tencent_voice(s: Any, c: Context) -> Notifier:
    return TencentVoiceNotifier(s, c.http, language=c.language, oncall=c.oncall, calls=c.calls, clock=c.clock)


CHANNELS: Mapping[str, Channel] = {c.type: c for c in (
    Channel(WeComReceiverSpec, _chat(WeComNotifier)),
    Channel(PagerDutyReceiverSpec, lambda s, c: PagerDutyNotifier(s, c.http, c.external_url)),
    Channel(TwilioReceiverSpec, lambda s, c: TwilioNotifier(s, c.http)),
    Channel(SlackReceiverSpec, _chat(SlackNotifier)),
    Channel(TelegramReceiverSpec, _chat(TelegramNotifier)),
    Channel(DiscordReceiverSpec, _chat(DiscordNotifier)),
    Channel(EmailReceiverSpec, lambda s, c: EmailNotifier(s, c.external_url, language=c.language,
                                                          timezone=c.timezone)),
    Channel(WebhookReceiverSpec, lambda s, c: WebhookNotifier(s, c.http, c.external_url)),
    Channel(TerminalReceiverSpec, lambda s, c: c.terminal),
    Channel(DigestReceiverSpec, lambda s, c: c.terminal),
    Channel(DingTalkReceiverSpec, _chat(DingTalkNotifier)),
    Channel(FeishuReceiverSpec, _chat(FeishuNotifier)),
    Channel(WeComAppReceiverSpec, _chat(WeComAppNotifier)),
    Channel(AliyunVoiceReceiverSpec, _aliyun_voice),
    Channel(AliyunSmsReceiverSpec, lambda s, c: AliyunSmsNotifier(s, c.http, language=c.language,
                                                                  oncall=c.oncall)),
    Channel(TencentVoiceReceiverSpec, _tencent_voice),
    Channel(TencentSmsReceiverSpec, lambda s, c: TencentSmsNotifier(s, c.http, language=c.language,
                                                                    oncall=c.oncall)),
    Channel(DiscardReceiverSpec, lambda s, c: DiscardNotifier(s.name)),
    Channel(GoogleChatReceiverSpec, _chat(GoogleChatNotifier)),
)}
"""Each receiver type, keyed by its ``type``: one line per channel."""

if TYPE_CHECKING:
    ReceiverSpec = ReceiverBase
else:
    ReceiverSpec = Annotated[Union[tuple(c.spec for c in CHANNELS.values())],  # noqa: UP007
                             Field(discriminator="type")]
"""Any receiver's spec: the union of every channel's, told apart by ``type`` (``alerting.receivers``)."""


def build_notifier(spec: ReceiverSpec, http: HttpClient, external_url: str, stream: TextIO | None,
                   warn: Callable[[str], None] | None = None, *, language: str = "en",
                   timezone: str = "UTC", schedules: OnCallConfig | None = None,
                   calls: CallWatch | None = None, clock: Clock | None = None) -> Notifier:
    """The notifier for a receiver spec; without credentials, a terminal fallback that says so once."""
    language = spec.language or language  # a receiver's own language wins
    terminal = TerminalNotifier(spec.name, stream, external_url, language=language, timezone=timezone)
    oncall = ScheduleNumbers(schedules, spec.name) if schedules is not None else None
    try:
        context = Context(http, external_url, language, timezone, terminal, oncall, calls, clock)
        return CHANNELS[spec.type].build(spec, context)
    except MissingCredentialError as exc:  # any other error is a bug or a bad config: it surfaces
        return FallbackNotifier(exc.receiver, f"no credentials: needs {exc.missing}", terminal, warn)


def robot_key(spec: ReceiverSpec) -> str:
    """What a rate limit is counted per: the robot (two receivers posting to one robot share it)."""
    if isinstance(spec, DingTalkReceiverSpec | FeishuReceiverSpec) and spec.url is not None:
        return f"{spec.type}:{spec.url.reveal()}"  # in memory only, never shown
    if isinstance(spec, WeComReceiverSpec) and spec.key is not None:
        return f"wecom:{spec.url}:{spec.key.reveal()}"
    return f"receiver:{spec.name}"
