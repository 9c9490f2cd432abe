"""Chat receivers: WeCom robots and apps, DingTalk and Feishu robots, Slack, Telegram, Discord."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from inferwatch.settings._types import Secret
from inferwatch.settings.receivers._base import (
    GoTemplated,
    RateLimitSpec,
    ReceiverBase,
    phones,
    webhook_secret,
)

__all__ = [
    "DingTalkReceiverSpec",
    "DiscordReceiverSpec",
    "FeishuReceiverSpec",
    "SlackReceiverSpec",
    "TelegramReceiverSpec",
    "WeComAppReceiverSpec",
    "WeComReceiverSpec",
]


class WeComReceiverSpec(ReceiverBase):
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


class WeComAppReceiverSpec(ReceiverBase, GoTemplated):
    """A WeCom (企业微信) application's messages to users, parties or tags (markdown)."""

    go_fields = ("message",)
    type: Literal["wecom_app"] = "wecom_app"
    message: str | None = Field(None, description="a Go template (Alertmanager's subset): the message, "
                                "instead of inferwatch's")
    corp_id: str = Field("", description="the company's corp id (ww...)")
    agent_id: int = Field(0, ge=0, description="the application's AgentId")
    secret: Secret | None = Field(None, description="the application's Secret")
    to_user: tuple[str, ...] = Field((), description="user ids ('@all': everyone)")
    to_party: tuple[str, ...] = ()
    to_tag: tuple[str, ...] = ()
    url: str = "https://qyapi.weixin.qq.com"

    @model_validator(mode="after")
    def _someone(self) -> WeComAppReceiverSpec:
        if not (self.to_user or self.to_party or self.to_tag):
            raise ValueError("needs at least one of to_user, to_party, to_tag")
        if self.secret is not None and not (self.corp_id and self.agent_id):
            raise ValueError("corp_id and agent_id are needed with a secret")
        return self


class DingTalkReceiverSpec(ReceiverBase):
    """DingTalk (钉钉) group robot: markdown, signed URL when ``secret`` is set, @ by mobile or user id.

    With ``app_key``, ``app_secret``, ``robot_code`` and ``open_conversation_id`` instead of ``url``,
    an app's robot sends interactive cards (``StandardCard``), edited in place when acknowledged or
    resolved.
    """

    type: Literal["dingtalk"] = "dingtalk"
    url: Secret | None = Field(None, description="https://oapi.dingtalk.com/robot/send?access_token=...")
    secret: Secret | None = Field(None, description="the robot's signing secret (SEC...), if it signs")
    keywords: tuple[str, ...] = Field((), description="the robot's security keywords: one is always sent")
    at_mobiles: tuple[str, ...] = ()
    at_user_ids: tuple[str, ...] = ()
    at_all: bool = Field(False, description="@everyone (isAtAll); only when set")
    app_key: str = Field("", description="an app (企业内部应用 with a robot) instead of a group robot: its "
                         "interactive cards are edited in place when acknowledged or resolved (give "
                         "app_secret, robot_code, open_conversation_id)")
    app_secret: Secret | None = Field(None, description="the app's AppSecret")
    robot_code: str = Field("", description="the app robot's robotCode")
    open_conversation_id: str = Field("", description="the group's openConversationId (cid...)")
    api_url: str = Field("https://api.dingtalk.com", description="the new server API's base")
    rate_limit: RateLimitSpec | None = Field(default_factory=RateLimitSpec)  # 20 a minute per robot

    @field_validator("url")
    @classmethod
    def _url(cls, v: Secret | None) -> Secret | None:
        return webhook_secret(v, "https://oapi.dingtalk.com/robot/send?access_token=TOKEN", "query")

    @model_validator(mode="after")
    def _app(self) -> DingTalkReceiverSpec:
        _one_way(self, ("app_key", "app_secret", "robot_code", "open_conversation_id"), "a DingTalk app")
        return self

    @field_validator("at_mobiles")
    @classmethod
    def _mobiles(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return phones(v)


class FeishuReceiverSpec(ReceiverBase):
    """Feishu / Lark (飞书) group robot: interactive cards coloured by tier, signed when ``secret`` is set.

    With ``app_id``, ``app_secret`` and ``chat_id`` instead of ``url``, the cards go through a Feishu
    app's bot (the IM API), which can edit them in place: acknowledged, and resolved.
    """

    type: Literal["feishu"] = "feishu"
    url: Secret | None = Field(None, description="https://open.feishu.cn/open-apis/bot/v2/hook/...")
    secret: Secret | None = Field(None, description="the robot's signing secret, if it signs")
    keywords: tuple[str, ...] = Field((), description="the robot's security keywords: one is always sent")
    app_id: str = Field("", description="a Feishu app (自建应用, bot ability on) instead of a robot: its "
                        "cards are edited in place when acknowledged or resolved (give app_secret, chat_id)")
    app_secret: Secret | None = Field(None, description="the app's App Secret")
    chat_id: str = Field("", pattern=r"^(oc_[A-Za-z0-9]+)?$",
                         description="the group (oc_...) the app's bot is in")
    api_url: str = Field("https://open.feishu.cn",
                         description="the IM API's base (Lark: https://open.larksuite.com)")
    # 100 a minute and 5 a second: 5 in any 4 s keeps both.
    rate_limit: RateLimitSpec | None = Field(default_factory=lambda: RateLimitSpec(count=5, per=4.0))

    @field_validator("url")
    @classmethod
    def _url(cls, v: Secret | None) -> Secret | None:
        return webhook_secret(v, "https://open.feishu.cn/open-apis/bot/v2/hook/TOKEN", "path")

    @model_validator(mode="after")
    def _app(self) -> FeishuReceiverSpec:
        _one_way(self, ("app_id", "app_secret", "chat_id"), "a Feishu app")
        return self


def _one_way(spec: DingTalkReceiverSpec | FeishuReceiverSpec, fields: tuple[str, ...], what: str) -> None:
    """An app's fields come together, and instead of a robot's ``url``."""
    given = [k for k in fields if getattr(spec, k)]
    if given and len(given) < len(fields):
        raise ValueError(f"{what} needs {', '.join(fields[:-1])} and {fields[-1]} together "
                         f"(got only {', '.join(given)})")
    if given and spec.url is not None:
        raise ValueError(f"give either url (a group robot) or {'/'.join(fields)} (an app), not both")


class SlackReceiverSpec(ReceiverBase, GoTemplated):
    """A Slack incoming webhook (the URL is the secret); ``title``/``text`` as Alertmanager's Go templates."""

    go_fields = ("title", "text")
    type: Literal["slack"] = "slack"
    webhook_url: Secret | None = None
    title: str | None = Field(None, description="a Go template (Alertmanager's subset): the attachment title")
    text: str | None = Field(None, description="a Go template (Alertmanager's subset): the attachment's text")


class TelegramReceiverSpec(ReceiverBase, GoTemplated):
    """A Telegram bot posting to a chat (Bot API ``sendMessage``, plain text)."""

    go_fields = ("message",)
    type: Literal["telegram"] = "telegram"
    message: str | None = Field(None, description="a Go template (Alertmanager's subset): the message, "
                                "instead of inferwatch's")
    bot_token: Secret | None = Field(None, description="the bot's token from @BotFather")
    chat_id: str = Field(pattern=r"^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$",
                         description="the chat: a numeric id, or @channelusername")
    message_thread_id: int | None = Field(None, ge=1, description="a forum topic of the chat")
    disable_notification: bool = Field(False, description="deliver silently")
    url: str = "https://api.telegram.org"
    rate_limit: RateLimitSpec | None = Field(default_factory=RateLimitSpec)


class DiscordReceiverSpec(ReceiverBase):
    """A Discord channel's webhook (Execute Webhook; the URL holds the webhook's token)."""

    type: Literal["discord"] = "discord"
    webhook_url: Secret | None = Field(None, description="https://discord.com/api/webhooks/ID/TOKEN")
    username: str | None = Field(None, min_length=1, max_length=80, description="shown instead of the "
                                 "webhook's own name")
    # Discord allows a webhook about 5 requests in 2 seconds and a channel 30 messages a minute
    rate_limit: RateLimitSpec | None = Field(default_factory=lambda: RateLimitSpec(count=30, per=60.0))

    @field_validator("webhook_url")
    @classmethod
    def _url(cls, v: Secret | None) -> Secret | None:
        return webhook_secret(v, "https://discord.com/api/webhooks/ID/TOKEN", "path")
