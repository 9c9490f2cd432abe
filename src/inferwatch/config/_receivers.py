"""``alerting.receivers`` and ``alerting.actions``: where notifications go, what runs.

Each receiver or action is chosen by its literal ``type``. Base URLs are
configurable so tests (and proxies) can point them elsewhere; a receiver
without its credentials falls back to printing in the terminal.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.config._receiver_base import RateLimitSpec, _Receiver
from inferwatch.config._receivers_cn import (
    AliyunSmsReceiverSpec,
    AliyunVoiceReceiverSpec,
    DingTalkReceiverSpec,
    FeishuReceiverSpec,
    TencentSmsReceiverSpec,
    TencentVoiceReceiverSpec,
    WeComAppReceiverSpec,
)
from inferwatch.config._types import Duration, FrozenModel, Secret
from inferwatch.model import is_valid_label_name, parse_matchers

__all__ = [
    "PAGERDUTY_KEY_LEN",
    "ActionSpec",
    "CommandActionSpec",
    "DegradeActionSpec",
    "DigestReceiverSpec",
    "EmailReceiverSpec",
    "HttpActionSpec",
    "KubernetesScaleSpec",
    "PagerDutyReceiverSpec",
    "RateLimitSpec",
    "ReceiverSpec",
    "RollbackActionSpec",
    "SlackReceiverSpec",
    "TelegramReceiverSpec",
    "TerminalReceiverSpec",
    "TwilioReceiverSpec",
    "WeComReceiverSpec",
    "WebhookReceiverSpec",
]


PAGERDUTY_KEY_LEN = 32


def check_matchers(value: tuple[str, ...]) -> tuple[str, ...]:
    """Validate Alertmanager-style matcher strings (``severity="critical"``)."""
    for text in value:
        parse_matchers(text)
    return value


class WeComReceiverSpec(_Receiver):
    """WeCom (企业微信) group robot, markdown messages."""

    type: Literal["wecom"] = "wecom"
    key: Secret | None = Field(None, description="the robot's webhook key")
    url: str = "https://qyapi.weixin.qq.com"
    mentioned_list: tuple[str, ...] = Field(
        (), description="user ids to @mention ('@all': everyone, sends text messages)")
    mentioned_mobile_list: tuple[str, ...] = Field(
        (), description="phone numbers to @mention ('@all': everyone); sends text messages")
    rate_limit: RateLimitSpec | None = Field(default_factory=RateLimitSpec)

    @field_validator("mentioned_mobile_list")
    @classmethod
    def _mobiles(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [m for m in v if m != "@all" and not re.fullmatch(r"\+?[0-9][0-9-]{4,19}", m)]
        if bad:
            raise ValueError(f"not a phone number or '@all': {', '.join(map(repr, bad))}")
        return v

    @field_validator("mentioned_list")
    @classmethod
    def _userids(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [u for u in v if not re.fullmatch(r"@all|[A-Za-z0-9_.@-]{1,64}", u)]
        if bad:
            raise ValueError(f"not a WeCom user id or '@all': {', '.join(map(repr, bad))}")
        return v


class PagerDutyReceiverSpec(_Receiver):
    """PagerDuty Events API v2; P0 goes as ``critical``, which pages the on-call by phone."""

    type: Literal["pagerduty"] = "pagerduty"
    routing_key: Secret | None = Field(None, description="the 32-character integration key")
    url: str = "https://events.pagerduty.com"

    @field_validator("routing_key")
    @classmethod
    def _key_length(cls, v: Secret | None) -> Secret | None:
        # Events API v2 integration keys are 32 characters; never echo the value itself.
        if v is not None and len(v.reveal()) != PAGERDUTY_KEY_LEN:
            raise ValueError(f"must be the {PAGERDUTY_KEY_LEN}-character integration key "
                             f"(got {len(v.reveal())} characters)")
        return v


class TwilioReceiverSpec(_Receiver):
    """A Twilio voice call reading the alert (the phone path without PagerDuty)."""

    type: Literal["twilio"] = "twilio"
    account_sid: str = ""
    auth_token: Secret | None = None
    from_: str = Field("", alias="from")
    to: tuple[str, ...] = ()
    url: str = "https://api.twilio.com"

    model_config = FrozenModel.model_config | {"populate_by_name": True}

    @field_validator("from_", "to")
    @classmethod
    def _e164(cls, v: str | tuple[str, ...]) -> str | tuple[str, ...]:
        # Twilio takes E.164 numbers (+15551234567), or a client:/sip: address to call
        bad = [x for x in ((v,) if isinstance(v, str) else v)
               if x and not re.fullmatch(r"\+[1-9][0-9]{1,14}|(client|sip):\S+", x)]
        if bad:
            raise ValueError(f"not an E.164 number (+15551234567): {', '.join(map(repr, bad))}")
        return v


class SlackReceiverSpec(_Receiver):
    """A Slack incoming webhook (the URL is the secret)."""

    type: Literal["slack"] = "slack"
    webhook_url: Secret | None = None


class TelegramReceiverSpec(_Receiver):
    """A Telegram bot posting to a chat (Bot API ``sendMessage``, plain text)."""

    type: Literal["telegram"] = "telegram"
    bot_token: Secret | None = Field(None, description="the bot's token from @BotFather")
    chat_id: str = Field(pattern=r"^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$",
                         description="the chat: a numeric id, or @channelusername")
    message_thread_id: int | None = Field(None, ge=1, description="a forum topic of the chat")
    disable_notification: bool = Field(False, description="deliver silently")
    url: str = "https://api.telegram.org"
    rate_limit: RateLimitSpec | None = Field(default_factory=RateLimitSpec)


class EmailReceiverSpec(_Receiver):
    """E-mail over SMTP: STARTTLS by default, implicit TLS on port 465; no login in clear unless told."""

    type: Literal["email"] = "email"
    smarthost: str = Field("", description="host:port of the SMTP server")
    from_: str = Field("inferwatch@localhost", alias="from")
    to: tuple[str, ...] = ()
    username: str = ""
    password: Secret | None = None
    starttls: bool = Field(True, description="upgrade with STARTTLS; refuse a server that does not offer it")
    implicit_tls: bool | None = Field(None, description="TLS from the first byte (default: on for port 465)")
    allow_insecure_auth: bool = Field(False, description="allow a login over a connection without TLS")
    ca_file: str = Field("", description="PEM file of the CAs to trust (default: the system's)")
    timeout: Duration = 10.0

    model_config = FrozenModel.model_config | {"populate_by_name": True}

    @field_validator("smarthost")
    @classmethod
    def _hostport(cls, v: str) -> str:
        host, _, port = v.rpartition(":")
        if v and (not host or not port.isdigit() or not 0 < int(port) < 65536):
            raise ValueError("must be host:port, e.g. smtp.example.com:587")
        return v

    @property
    def uses_implicit_tls(self) -> bool:
        """TLS from connect: ``implicit_tls``, or port 465 (SMTPS) when not set."""
        return self.implicit_tls if self.implicit_tls is not None else self.smarthost.endswith(":465")

    @model_validator(mode="after")
    def _no_login_in_clear(self) -> EmailReceiverSpec:
        clear = not self.starttls and not self.uses_implicit_tls
        if clear and self.username and not self.allow_insecure_auth:
            raise ValueError("username/password would be sent in clear (starttls: false, no implicit TLS); "
                             "turn TLS on, or set allow_insecure_auth: true")
        return self


class WebhookReceiverSpec(_Receiver):
    """POST of Alertmanager's webhook JSON (version 4)."""

    type: Literal["webhook"] = "webhook"
    url: str = ""
    bearer_token: Secret | None = None
    max_alerts: int = Field(0, ge=0, description="0: no limit; else truncate and count")


class TerminalReceiverSpec(_Receiver):
    """Print notifications on standard output."""

    type: Literal["terminal"] = "terminal"


class DigestReceiverSpec(_Receiver):
    """Collect alerts into a digest delivered daily at a local time."""

    type: Literal["digest"] = "digest"
    at: str = Field("09:00", pattern=r"^([01]\d|2[0-3]):[0-5]\d$", description="local HH:MM")
    timezone: str = Field("UTC", description="IANA time zone, e.g. Asia/Shanghai")
    deliver_to: str = Field("terminal", description="the receiver that gets the digest")

    @field_validator("timezone")
    @classmethod
    def _tz(cls, v: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {v!r}") from None
        return v


ReceiverSpec = Annotated[
    WeComReceiverSpec | PagerDutyReceiverSpec | TwilioReceiverSpec | SlackReceiverSpec | TelegramReceiverSpec
    | EmailReceiverSpec | WebhookReceiverSpec | TerminalReceiverSpec | DigestReceiverSpec
    | DingTalkReceiverSpec | FeishuReceiverSpec | WeComAppReceiverSpec | AliyunVoiceReceiverSpec
    | AliyunSmsReceiverSpec | TencentVoiceReceiverSpec | TencentSmsReceiverSpec,
    Field(discriminator="type"),
]


class _Action(FrozenModel):
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    matchers: tuple[str, ...] = Field((), description="alerts that trigger the action")
    timeout: Duration = Field(10.0, gt=0)
    once_per: tuple[str, ...] = Field(
        (), description="labels naming the action's target: alerts sharing them run it once "
        "per cooldown (the others are recorded as deduplicated)"
    )
    cooldown: Duration = Field(0.0, ge=0, description="with once_per: how long one run covers")

    @field_validator("matchers")
    @classmethod
    def _matchers(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return check_matchers(v)

    @field_validator("once_per")
    @classmethod
    def _labels(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        bad = [name for name in v if not is_valid_label_name(name)]
        if bad:
            raise ValueError(f"once_per: {', '.join(map(repr, bad))} not a label name")
        return v


def _no_once_per_when_restoring(spec: _Action, restores: bool) -> None:
    # One run covers several alerts, but each alert's resolve would restore it while the
    # others still fire: refused rather than wrong.
    if spec.once_per and restores:
        raise ValueError(f"once_per: not supported for a {spec.__class__.__name__.removesuffix('Spec')} "
                         "that undoes itself on resolve (the first resolve would undo it for all)")


class KubernetesScaleSpec(_Action):
    """Scale out a Deployment through the API server's ``scale`` subresource."""

    type: Literal["kubernetes_scale"] = "kubernetes_scale"
    once_per: tuple[str, ...] = ("service",)  # an alert storm across instances: one step
    cooldown: Duration = Field(300.0, ge=0, description="with once_per: how long one run covers")
    namespace: str = "default"
    deployment: str = Field("{service}", description="name; {label} placeholders are filled")
    step: int = Field(1, ge=1, description="replicas added per firing episode")
    max_replicas: int = Field(10, ge=1)
    api_server: str = Field("", description="overrides kubeconfig / in-cluster server URL")
    kubeconfig: str = Field("", description="path; default $KUBECONFIG, ~/.kube/config, in-cluster")
    token: Secret | None = None
    verify_tls: bool = True


class HttpActionSpec(_Action):
    """Call an HTTP endpoint when the alert fires (and optionally when it resolves)."""

    type: Literal["http"] = "http"
    url: str
    method: Literal["POST", "PUT", "PATCH"] = "POST"
    body: dict[str, object] = Field(default_factory=dict)
    resolve_url: str = ""
    resolve_body: dict[str, object] = Field(default_factory=dict)
    bearer_token: Secret | None = None

    @model_validator(mode="after")
    def _restore(self) -> HttpActionSpec:
        _no_once_per_when_restoring(self, bool(self.resolve_url))
        return self


class CommandActionSpec(_Action):
    """Run a command (argv, no shell) when the alert fires; alert labels in the environment."""

    type: Literal["command"] = "command"
    argv: tuple[str, ...] = Field(min_length=1)
    resolve_argv: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _restore(self) -> CommandActionSpec:
        _no_once_per_when_restoring(self, bool(self.resolve_argv))
        return self


class DegradeActionSpec(_Action):
    """Turn on the service's degraded mode (admin endpoint) and restore it on resolve."""

    type: Literal["degrade"] = "degrade"
    url: str = Field("", description="admin endpoint, e.g. http://{instance}/admin/degrade")
    bearer_token: Secret | None = None

    @model_validator(mode="after")
    def _restore(self) -> DegradeActionSpec:
        _no_once_per_when_restoring(self, True)
        return self


class RollbackActionSpec(_Action):
    """Roll back the model; runs only when ``enabled``, else recommends it in the notification."""

    type: Literal["rollback"] = "rollback"
    once_per: tuple[str, ...] = ("service", "model")  # many drifted features: one rollback
    cooldown: Duration = Field(3600.0, ge=0, description="with once_per: how long one run covers")
    enabled: bool = False
    url: str = ""
    argv: tuple[str, ...] = ()


ActionSpec = Annotated[
    KubernetesScaleSpec | HttpActionSpec | CommandActionSpec | DegradeActionSpec | RollbackActionSpec,
    Field(discriminator="type"),
]
